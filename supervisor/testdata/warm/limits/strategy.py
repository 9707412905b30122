"""What a run does comes from its environment (WARM_MODE): it shows that
each run's limits are its own."""
import os
import subprocess
import sys
import time

mode = os.environ.get("WARM_MODE", "")
if mode == "memory":
    block = bytearray(300 << 20)  # touched: resident
    for i in range(0, len(block), 4096):
        block[i] = 1
    print("allocated", flush=True)
    time.sleep(300)
elif mode == "bomb":
    kids = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"]) for _ in range(12)]
    print("bombed", flush=True)
    time.sleep(300)
elif mode == "tree":
    # A child, and an escapee that left the session by double fork.
    child = subprocess.Popen([sys.executable, "-c", "import os, time; print('child', os.getpid(), flush=True); time.sleep(300)"])
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            print("escapee", os.getpid(), flush=True)
            time.sleep(300)
        os._exit(0)
    print("program", os.getpid(), flush=True)
    time.sleep(300)
elif mode == "idle":
    print("idle", flush=True)  # and on to the bridge, which waits for the host


def on_data(ctx, history):
    pass
