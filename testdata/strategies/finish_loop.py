"""Fails with a timeout in on_finish, which never returns. It prints when
on_finish started (unix seconds), for tests to time the kill."""
import time


def on_data(ctx, history):
    pass


def on_finish(ctx):
    print("on_finish looping forever since %.6f" % time.time(), flush=True)
    while True:
        pass
