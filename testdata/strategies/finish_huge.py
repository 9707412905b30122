"""Fails with protocol: on_finish returns a dict larger than 8 MiB."""


def on_data(ctx, history):
    pass


def on_finish(ctx):
    return {"blob": "z" * (9 << 20)}
