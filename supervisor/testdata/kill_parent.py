"""A grandchild that leaves its session and kills its parent, then (with
"init") the tree's init too: the root's parent, PID 1 in a PID namespace.

Usage: kill_parent.py parent|init [rewrite]   with "rewrite" the grandchild
first forges the supervisor's marker in its environment block (see
env_rewrite.py)."""
import ctypes
import os
import signal
import sys
import time

init = os.getppid()
mode = sys.argv[1]
r, w = os.pipe()
parent = os.fork()
if parent == 0:
    if os.fork() == 0:
        os.setsid()
        if sys.argv[2:] == ["rewrite"]:
            with open("/proc/self/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            start, end = int(fields[47]), int(fields[48])
            block = ctypes.string_at(start, end - start)
            i = block.index(b"STRATBENCH_SUPERVISOR_TREE=") + len(b"STRATBENCH_SUPERVISOR_TREE=")
            n = block.index(b"\0", i) - i
            ctypes.memmove(start + i, b"0" * n, n)
        mine = os.getppid()
        os.kill(mine, signal.SIGKILL)
        while os.getppid() == mine:
            time.sleep(0.001)
        print("reparented to", os.getppid(), flush=True)
        print("escapee", os.getpid(), flush=True)
        if mode == "init":
            os.kill(init, signal.SIGKILL)
            print("killed init", init, flush=True)
        os.write(w, b"x")
        time.sleep(300)
        os._exit(0)
    time.sleep(300)
    os._exit(0)
os.read(r, 1)
print("ready", flush=True)
time.sleep(300)
