"""Passes: on_execution takes 20 ms per fill and answers each with a resting
limit order; with many fills at one bar the replay stays there a while, but
every execution is delivered and no call breaks its limit."""
import time

fills = 0


def on_data(ctx, history):
    pass


def on_execution(ctx, execution):
    global fills
    fills += 1
    time.sleep(0.02)
    ctx.sell(execution.symbol, 1, limit=1e9)


def on_finish(ctx):
    return {"fills": fills}
