"""Passes: in on_finish, fills the disk of its artifacts folder until a
write fails with ENOSPC (caught), printing nothing: stratbench's final report
then has no room left (for the test of an unsaved report)."""
import errno

result = {}


def on_data(ctx, history):
    pass


def on_finish(ctx):
    chunk = b"x" * 4096
    written = 0
    with open(ctx.artifact_path("fill.bin"), "wb", buffering=0) as f:
        try:
            while True:
                written += f.write(chunk)
        except OSError as e:
            result["errno"] = errno.errorcode.get(e.errno, e.errno)
    result["written"] = written
    return result
