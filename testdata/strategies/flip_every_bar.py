"""Passes: an order on every bar, a buy of 1 then a sell of it, so that
every order fills (the benchmark of one order's way through the market:
a round trip to stratbench, or a fill the worker delivers itself)."""


def on_data(ctx, history):
    if ctx.position(ctx.symbol):
        ctx.sell(ctx.symbol, 1)
    else:
        ctx.buy(ctx.symbol, 1)
