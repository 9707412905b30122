"""Passes slowly: sleeps in on_data so that a stop request arrives mid-run;
on_finish records that it ran."""
import time


def on_data(ctx, history):
    time.sleep(0.02)


def on_finish(ctx):
    print("on_finish ran")
    return {"finished": True}
