"""Counts its runs in a third-party module's state: every run starts from
the template's state, so each prints count 1, with the template's token."""
import os

import countlib
import helper  # noqa: F401  (the folder's: stops the template's imports here)

countlib.count += 1
print("count", countlib.count, "token", countlib.token, "pid", os.getpid(), flush=True)
print("strategy module executed", flush=True)


def on_data(ctx, history):
    print("hook", flush=True)
