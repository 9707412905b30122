"""Forges the supervisor's marker in the kernel's copy of its environment
(the bytes between env_start and env_end of /proc/self/stat, which
/proc/PID/environ shows), then leaves daemons behind: double fork and setsid.
Each daemon inherits the forged environment and fd 3 if there is one.

Usage: env_rewrite.py N [exit FILE]   N daemons; with "exit" the root exits
once FILE exists, as a strategy that "passed" would."""
import ctypes
import os
import sys
import time

MARKER = b"STRATBENCH_SUPERVISOR_TREE="

with open("/proc/self/stat", "rb") as f:
    fields = f.read().rsplit(b")", 1)[1].split()
# fields[0] is field 3 of proc_pid_stat(5); env_start and env_end are 50 and 51.
start, end = int(fields[47]), int(fields[48])
block = ctypes.string_at(start, end - start)
i = block.find(MARKER)
if i < 0:
    sys.exit("no marker in the environment")
value = start + i + len(MARKER)
length = block.index(b"\0", i) - i - len(MARKER)
ctypes.memmove(value, b"0" * length, length)
with open("/proc/self/environ", "rb") as f:
    if MARKER + b"0" * length + b"\0" not in f.read():
        sys.exit("the rewrite did not show in /proc/self/environ")
print("rewritten", flush=True)

n = int(sys.argv[1])
r, w = os.pipe()
for _ in range(n):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.close(r)
            print("escapee", os.getpid(), flush=True)
            os.write(w, b"x")
            time.sleep(300)
            os._exit(0)
        os._exit(0)
    os.wait()
os.close(w)
for _ in range(n):
    os.read(r, 1)
print("ready", flush=True)
if sys.argv[2:3] == ["exit"]:
    while not os.path.exists(sys.argv[3]):
        time.sleep(0.005)
    sys.exit(0)
time.sleep(300)
