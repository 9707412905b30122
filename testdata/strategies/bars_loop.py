"""Fails with a timeout in on_bars: the third timestamp's call never
returns. It prints when the looping call started (unix seconds), for tests
to time the kill."""
import time

count = 0


def on_bars(ctx, bars):
    global count
    count += 1
    if count == 3:
        print("looping forever since %.6f" % time.time(), flush=True)
        while True:
            pass
