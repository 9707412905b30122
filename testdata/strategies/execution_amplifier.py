"""Fails with a timeout in on_execution: every rejection places 50,000 more
orders the market rejects at once, so the executions waiting for
on_execution grow without end and the replay never reaches the next bar.
stratbench stops it before they take its memory."""


def on_data(ctx, history):
    ctx.buy("NOPE", 1)


def on_execution(ctx, execution):
    buy = ctx.buy
    for _ in range(50_000):
        buy("NOPE", 1)
