"""Fails with a timeout: on the third bar it marks its call as returned in
the shared page (as if the bridge were between calls) and loops forever. The
host times the bridge's gaps too, so the pretence buys nothing."""
count = 0


def on_data(ctx, history):
    global count
    count += 1
    if count == 3:
        ctx._state[0] += 1
        while True:
            pass
