"""Passes: leaves 50,000 limit orders far below the market open on every
bar. Open orders stay in stratbench's memory, so there is a cap on them:
orders beyond it are rejected ("too many open orders")."""

PER_BAR = 50_000


def on_data(ctx, history):
    buy, symbol = ctx.buy, ctx.symbol
    for _ in range(PER_BAR):
        buy(symbol, 1, limit=0.01)
