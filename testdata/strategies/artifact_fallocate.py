"""Passes: allocates MIB MiB in its artifacts folder with fallocate, keeping
the files' size at 0 (FALLOC_FL_KEEP_SIZE, which RLIMIT_FSIZE does not
check), one MiB a file, and gives one of them ten more names. At the first
bar; the run ends at once."""
import ctypes
import os

MANIFEST = {"params": {"mib": 1}}
FALLOC_FL_KEEP_SIZE = 1
libc = ctypes.CDLL(None, use_errno=True)
done = {}


def on_data(ctx, history):
    if done:
        return
    for i in range(ctx.params["mib"]):
        fd = os.open(ctx.artifact_path("alloc%d.bin" % i), os.O_WRONLY | os.O_CREAT, 0o644)
        r = libc.fallocate(fd, FALLOC_FL_KEEP_SIZE, ctypes.c_long(0), ctypes.c_long(1 << 20))
        os.close(fd)
        if r != 0:
            raise OSError(ctypes.get_errno(), "fallocate")
    for i in range(10):
        os.link(ctx.artifact_path("alloc0.bin"), ctx.artifact_path("name%d" % i))
    done["ok"] = True
