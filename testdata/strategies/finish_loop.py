"""Fails with a timeout in on_finish, which never returns."""


def on_data(ctx, history):
    pass


def on_finish(ctx):
    print("on_finish looping forever", flush=True)
    while True:
        pass
