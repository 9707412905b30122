"""Passes: on its first bar prints "holding" and waits (within the hook's
limit) until the file named by the hold param exists, so that a test can
change the world while the run is under way; then counts bars."""
import os
import time

MANIFEST = {"params": {"hold": ""}}
count = 0


def on_data(ctx, history):
    global count
    count += 1
    if count == 1:
        print("holding", flush=True)
        deadline = time.monotonic() + 4
        while not os.path.exists(ctx.params["hold"]) and time.monotonic() < deadline:
            time.sleep(0.01)


def on_finish(ctx):
    return {"bars": count}
