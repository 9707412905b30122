# A fork loop of setsid'd orphans: a new escapee every ~2 ms, forever.
import os, time

print("bombing", flush=True)
while True:
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(300)
        os._exit(0)
    os.waitpid(pid, 0)
    time.sleep(0.002)
