"""Fails with an exception raised in a helper function, on the fifth bar."""
count = 0


def position_size(cash, price):
    return cash / (price - price)  # ZeroDivisionError


def on_data(ctx, history):
    global count
    count += 1
    if count == 5:
        ctx.buy(ctx.symbol, 1)
        position_size(ctx.cash, ctx.bar.close)
