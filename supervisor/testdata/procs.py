# Runs N processes in all: the root and N-1 sleeping children.
import os, sys, time

n = int(sys.argv[1])
for _ in range(n - 1):
    if os.fork() == 0:
        time.sleep(300)
        os._exit(0)
print("ready", flush=True)
time.sleep(300)
