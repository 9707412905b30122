"""Fails with a timeout in on_execution: every rejection places another order
the market rejects at once, so the replay never reaches the next bar although
each call returns quickly."""


def on_data(ctx, history):
    ctx.buy("NOPE", 1)


def on_execution(ctx, execution):
    ctx.buy("NOPE", 1)
