"""Defines both bar hooks: an exception at startup naming both."""


def on_data(ctx, history):
    pass


def on_bars(ctx, bars):
    pass
