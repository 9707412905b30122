"""Fails at startup: a syntax error on line 4."""

def on_data(ctx, history)
    pass
