"""A root that starts a sibling with clone(CLONE_PARENT): the sibling's parent
is stratbench's thread that started the root. It prints the sibling's pid."""
import ctypes
import os
import time

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
CLONE_PARENT = 0x00008000
SIGCHLD = 17
pid = libc.syscall(56, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0)
if pid == 0:
    os.write(1, ("sibling %d\n" % os.getpid()).encode())
    time.sleep(30)
    os._exit(0)
time.sleep(30)
