"""Passes slowly: sleeps in on_data so that a stop request arrives mid-run;
on_finish records that it ran. "first bar" on stdout says the run is under
way (tests wait for it instead of sleeping)."""
import time


first = True


def on_data(ctx, history):
    global first
    if first:
        first = False
        print("first bar")
    time.sleep(0.02)


def on_finish(ctx):
    print("on_finish ran")
    return {"finished": True}
