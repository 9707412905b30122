"""Fails with a timeout in on_data: the third bar never returns. It prints
when the looping call started (unix seconds), for tests to time the kill."""
import time

count = 0


def on_data(ctx, history):
    global count
    count += 1
    if count == 3:
        print("looping forever since %.6f" % time.time(), flush=True)
        while True:
            pass
