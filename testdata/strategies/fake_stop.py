"""Fails with protocol: writes the host's stop request into the shared page
itself, so that its yield claims a stop nobody asked for. It lingers 2 ms
after writing it, past the bridge's next look for a stop (at most a
millisecond apart): the bridge sees it after this call."""
import time


def on_data(ctx, history):
    if len(history) == 3:
        ctx._state[1] = 1
        time.sleep(0.002)
