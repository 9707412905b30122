"""What a run does comes from its environment (WARM_MODE, WARM_KEY): it
shows that a run's shared memory and tasks are its own.

shm: leaves a System V segment (key WARM_KEY) and a /dev/shm file
("warm-WARM_KEY") of 4 MiB each, says "made", and goes on to the bridge.
look: says whether it sees them ("segment seen"/"segment gone", "file
seen"/"file gone"). threads: starts 150 blocked threads."""
import ctypes
import os
import threading
import time

mode = os.environ.get("WARM_MODE", "")
key = int(os.environ.get("WARM_KEY", "0"))
libc = ctypes.CDLL(None, use_errno=True)
name = "/dev/shm/warm-%d" % key
if mode == "shm":
    libc.shmat.restype = ctypes.c_void_p
    shmid = libc.shmget(key, ctypes.c_size_t(4 << 20), 0o1600)
    addr = libc.shmat(shmid, None, 0)
    ctypes.memset(addr, 1, 4 << 20)
    libc.shmdt(ctypes.c_void_p(addr))
    with open(name, "wb") as f:
        f.write(b"x" * (4 << 20))
    print("made", flush=True)
elif mode == "look":
    print("segment", "seen" if libc.shmget(key, 0, 0) >= 0 else "gone", flush=True)
    print("file", "seen" if os.path.exists(name) else "gone", flush=True)
elif mode == "threads":
    hold = threading.Event()
    for _ in range(150):
        threading.Thread(target=hold.wait, daemon=True).start()
    print("holding", flush=True)
    time.sleep(300)


def on_data(ctx, history):
    pass
