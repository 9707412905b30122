"""Fails with a timeout in on_data: the third bar never returns."""
count = 0


def on_data(ctx, history):
    global count
    count += 1
    if count == 3:
        print("looping forever", flush=True)
        while True:
            pass
