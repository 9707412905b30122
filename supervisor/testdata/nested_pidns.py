"""Starts processes in a PID namespace of its own (through a user namespace
of its own when not root), whose init leaves a daemon behind.

Exits 3 when the system refuses the namespaces."""
import ctypes
import os
import sys
import time

CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
libc = ctypes.CDLL(None, use_errno=True)
flags = CLONE_NEWPID | (CLONE_NEWUSER if os.geteuid() != 0 else 0)
if libc.unshare(flags) != 0:
    print("unshare refused:", os.strerror(ctypes.get_errno()), flush=True)
    sys.exit(3)
r, w = os.pipe()
if os.fork() == 0:
    # PID 1 of the nested namespace.
    print("nested init", os.getpid(), flush=True)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.write(w, b"x")
            time.sleep(300)
            os._exit(0)
        os._exit(0)
    os.wait()
    time.sleep(300)
    os._exit(0)
os.read(r, 1)
print("ready", flush=True)
time.sleep(300)
