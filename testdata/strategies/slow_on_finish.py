"""Passes slowly: 10 ms per bar, and an on_finish that takes 2 seconds."""
import time


def on_data(ctx, history):
    time.sleep(0.01)


def on_finish(ctx):
    print("on_finish started", flush=True)
    time.sleep(2)
    return {"finished": True}
