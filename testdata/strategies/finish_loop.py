"""Fails with a timeout in on_finish, which never returns."""


def on_data(ctx, history):
    pass


def on_finish(ctx):
    while True:
        pass
