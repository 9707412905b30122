"""A grandchild that leaves its session and kills its parent, then (with
"init") the tree's init too: the root's parent, PID 1 in a PID namespace.

Usage: kill_parent.py parent|init [--rewrite] [--go FILE]
--rewrite: the grandchild first forges the supervisor's marker in its
environment block (see env_rewrite.py). --go: it kills the init only once
FILE exists."""
import argparse
import ctypes
import os
import signal
import time

ap = argparse.ArgumentParser()
ap.add_argument("mode", choices=["parent", "init"])
ap.add_argument("--rewrite", action="store_true")
ap.add_argument("--go")
args = ap.parse_args()

init = os.getppid()
r, w = os.pipe()
if os.fork() == 0:
    if os.fork() == 0:
        os.setsid()
        if args.rewrite:
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
        if args.mode == "init":
            while args.go and not os.path.exists(args.go):
                time.sleep(0.005)
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
