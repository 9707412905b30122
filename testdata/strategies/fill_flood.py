"""Passes: fills thousands of orders on every bar. Each symbol alternates
between buying 5,000 lots of one share and selling them one by one, so every
bar fills 5,000 orders and every other bar closes 5,000 trades (run it with
enough --cash). stratbench's memory must not grow with them."""

PER_BAR = 5_000


def on_data(ctx, history):
    symbol = ctx.symbol
    order = ctx.sell if ctx.position(symbol) > 0 else ctx.buy
    for _ in range(PER_BAR):
        order(symbol, 1)
