"""Leaves shared memory behind: a System V segment of MIB MiB (key KEY),
touched, and a file of MIB MiB in /dev/shm (NAME). Says "made", then exits,
or with "hold" waits.

Usage: shm_leave.py KEY NAME MIB [hold]"""
import ctypes
import os
import sys
import time

key, name, mib = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
size = mib << 20
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
shmid = libc.shmget(key, ctypes.c_size_t(size), 0o1600)  # IPC_CREAT | 0600
if shmid < 0:
    sys.exit("shmget: " + os.strerror(ctypes.get_errno()))
addr = libc.shmat(shmid, None, 0)
ctypes.memset(addr, 1, size)
libc.shmdt(ctypes.c_void_p(addr))
with open(os.path.join("/dev/shm", name), "wb") as f:
    f.write(b"x" * size)
print("made", flush=True)
if sys.argv[4:] == ["hold"]:
    time.sleep(300)
