"""Passes slowly: 10 ms per bar, and an on_finish that takes 2 seconds.
"first bar" on stdout says the run is under way (tests wait for it instead
of sleeping)."""
import time


first = True


def on_data(ctx, history):
    global first
    if first:
        first = False
        print("first bar")
    time.sleep(0.01)


def on_finish(ctx):
    print("on_finish started", flush=True)
    time.sleep(2)
    return {"finished": True}
