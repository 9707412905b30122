"""Fails with an exception at the strategy's own line: a limit given as text."""


def on_data(ctx, history):
    ctx.buy(ctx.symbol, 1, limit="101.5")
