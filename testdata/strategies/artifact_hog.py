"""Passes: writes more into its artifacts folder than stratbench allows, and
reports what its writes did. First one file past the per-file cap, then
files of 256 KiB, a few milliseconds apart, until a write fails because the
folder went over its cap and nothing may grow any more. Both failures are
EFBIG ("File too large"): an OSError the strategy catches, not a kill."""
import time

CHUNK = b"x" * (64 << 10)
result = {}


def write_until_error(path, size):
    """Writes size bytes to path; returns the bytes written and the errno of
    the write that failed (None when none did)."""
    written = 0
    try:
        with open(path, "wb", buffering=0) as f:
            while written < size:
                written += f.write(CHUNK)
    except OSError as e:
        return written, e.errno
    return written, None


def on_data(ctx, history):
    if result:
        return
    result["big"] = write_until_error(ctx.artifact_path("big.bin"), 64 << 20)
    parts, err = 0, None
    deadline = time.monotonic() + 20
    while err is None and time.monotonic() < deadline:
        _, err = write_until_error(ctx.artifact_path("part%d.bin" % parts), 256 << 10)
        parts += 1
        time.sleep(0.005)
    result["parts"] = [parts, err]


def on_finish(ctx):
    return result
