# An escapee (setsid + double fork) that exits on its own after a moment,
# while the root lives on: the supervisor, its new parent, must reap it.
import os, time

child = os.fork()
if child == 0:
    os.setsid()
    if os.fork() == 0:
        print("escapee", os.getpid(), flush=True)
        time.sleep(0.3)
        os._exit(0)
    os._exit(0)
os.waitpid(child, 0)
time.sleep(300)
