"""Passes: an order loop gone wrong. Every bar places 50,000 orders that the
market rejects: 25,000 for a symbol that is not in the data (rejected when
placed) and 25,000 buys far beyond the cash (rejected when they would fill,
at the symbol's next bar). stratbench's memory must not grow with them."""

PER_BAR = 50_000


def on_data(ctx, history):
    buy, symbol = ctx.buy, ctx.symbol
    for _ in range(PER_BAR // 2):
        buy("NOPE", 1)
    for _ in range(PER_BAR // 2):
        buy(symbol, 1e12)


def on_finish(ctx):
    return {"orders_per_bar": PER_BAR}
