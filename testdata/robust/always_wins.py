"""A strategy for the Monte Carlo tests (montecarlo_test.go): on data whose
closes only rise, it buys every fifth bar and sells two bars later, so
that every trade it closes wins."""

MANIFEST = {"name": "always-wins", "params": {}, "history": 1}

bar = -1


def on_data(ctx, history):
    global bar
    bar += 1
    held = ctx.position(ctx.symbol)
    if bar % 5 == 0 and held == 0:
        ctx.buy(ctx.symbol, ctx.cash * 0.5 / ctx.bar.close)
    elif bar % 5 == 2 and held > 0:
        ctx.sell(ctx.symbol, held)
