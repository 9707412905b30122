# Starts threads that block forever: "leak" one every 2 ms, "burst" as fast
# as it can. When the kernel refuses one, it says how many it had started
# and holds them; "ceiling" then exits.
import sys
import threading
import time

mode = sys.argv[1]
hold = threading.Event()
started = 0
print("start", flush=True)
while True:
    try:
        threading.Thread(target=hold.wait, daemon=True).start()
    except RuntimeError as exc:
        print("refused after %d threads: %s" % (started, exc), flush=True)
        if mode == "ceiling":
            sys.exit(0)
        time.sleep(300)
    started += 1
    if mode == "leak":
        time.sleep(0.002)
