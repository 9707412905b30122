"""Fails at startup: there is no on_data."""


def on_finish(ctx):
    return None
