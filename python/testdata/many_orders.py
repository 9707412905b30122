"""One on_data call issues 40,000 orders: more than the command pipe holds,
so the bridge sends the rest inline on the answers pipe."""


def on_data(ctx, history):
    for _ in range(40_000):
        ctx.buy(ctx.symbol, 1)
