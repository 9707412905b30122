"""Fails with a timeout in on_data, after leaving a daemon (setsid, a double
fork, the supervisor's marker forged in its environment block) that keeps
every descriptor it inherited, the protocol pipes included, and would sleep
ten minutes. The run must end when the limit says, not when the daemon does.
It prints when the looping call started (unix seconds): when on_data was
entered, before the forks, which on a busy machine take a while."""
import ctypes
import os
import time

MARKER = b"STRATBENCH_SUPERVISOR_TREE="


def forge_marker():
    with open("/proc/self/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    start, end = int(fields[47]), int(fields[48])
    block = ctypes.string_at(start, end - start)
    i = block.index(MARKER) + len(MARKER)
    n = block.index(b"\0", i) - i
    ctypes.memmove(start + i, b"0" * n, n)


def on_data(ctx, history):
    began = time.time()
    forge_marker()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(600)
        os._exit(0)
    os.wait()
    print("looping forever since %.6f" % began, flush=True)
    while True:
        pass
