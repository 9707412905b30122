"""Each on_bars call takes 0.5 s, within a limit of 2 s a call: six calls
take 3 s in all, more than one call's limit, and the run passes, because
the limit is per call."""
import time

calls = 0


def on_bars(ctx, bars):
    global calls
    calls += 1
    time.sleep(0.5)


def on_finish(ctx):
    return {"calls": calls}
