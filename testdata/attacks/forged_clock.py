# attack: one on_data call runs 30 s while moving the per-call clock of the shared page (fd 5) forward every 2 s
# sandbox: both
# expect: exit=1 status=failed failure.kind=timeout failure.hook=on_data failure.event_index=0
# within: 6.5
import mmap
import time

page = None


def on_data(ctx, history):
    global page
    page = memoryview(mmap.mmap(5, 4096)).cast("Q")
    print("ATTACK %.6f" % time.time())
    end = time.time() + 30
    while time.time() < end:
        step = time.time() + 2
        while time.time() < step:
            pass
        # Claim that this call returned and the next one started.
        page[0] = page[0] + 2
    print("the forged clock bought 30 s")
