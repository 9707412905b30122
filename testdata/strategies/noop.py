"""Passes: does nothing, so only stratbench's own per-bar cost is left."""


def on_data(ctx, history):
    pass
