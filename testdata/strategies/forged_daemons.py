"""Passes, but first leaves five daemons behind (setsid and a double fork)
whose environment block was rewritten in place, so that the supervisor's
marker in it names no tree. The tree still counts them and ends with them."""
import ctypes
import os
import time

MARKER = b"STRATBENCH_SUPERVISOR_TREE="
started = False


def forge_marker():
    with open("/proc/self/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    # fields[0] is field 3 of proc_pid_stat(5); env_start and env_end are 50 and 51.
    start, end = int(fields[47]), int(fields[48])
    block = ctypes.string_at(start, end - start)
    i = block.index(MARKER) + len(MARKER)
    n = block.index(b"\0", i) - i
    ctypes.memmove(start + i, b"0" * n, n)


def on_data(ctx, history):
    global started
    if started:
        return
    started = True
    forge_marker()
    r, w = os.pipe()
    for _ in range(5):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.write(w, b"x")
                time.sleep(600)
                os._exit(0)
            os._exit(0)
        os.wait()
    for _ in range(5):
        os.read(r, 1)
    os.close(r)
    os.close(w)
    time.sleep(0.5)  # the daemons run beside the backtest for a while
