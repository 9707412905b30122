# attack: grow the shared state page (fd 5) with pwrite, without mapping it: gigabytes outside every process's RSS
# sandbox: both
# expect: exit=0 status=passed
# (the page is sealed against growing: pwrite fails, and the strategy raises if it did not)
import os
import time

tried = False


def on_data(ctx, history):
    global tried
    if tried:
        return
    tried = True
    print("ATTACK %.6f" % time.time())
    chunk = b"x" * (64 << 20)
    written = 0
    try:
        while written < 3 << 30:
            written += os.pwrite(5, chunk, 4096 + written)
    except OSError as exc:
        print("pwrite refused after", written, "bytes:", exc)
        return
    raise AssertionError("grew the shared page by %d bytes of memory nobody counts" % written)
