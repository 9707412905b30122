"""Planted state kept between runs (check_test.go): it counts its runs in a
file beside it, and trades every few bars, how many depending on the count."""
import os

MANIFEST = {"name": "state-file", "params": {}, "history": 1}

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runs.txt")
runs = int(open(path).read()) if os.path.exists(path) else 0
with open(path, "w") as f:
    f.write(str(runs + 1))
every = 3 + runs % 4
bar = -1


def on_data(ctx, history):
    global bar
    bar += 1
    held = ctx.position(ctx.symbol)
    if bar % every == 0 and held == 0:
        ctx.buy(ctx.symbol, 10)
    elif bar % every == 1 and held > 0:
        ctx.sell(ctx.symbol, held)
