"""Planted look-ahead (check_test.go): at import, a rolling mean of the
closes centred on each bar (ten bars each side, fewer at the ends) over the
whole of its data file, bars.csv beside it; it buys below that mean and
sells above it."""
import csv
import os

MANIFEST = {"name": "centred-window", "params": {"half": 10}, "history": 1}

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "bars.csv")) as f:
    rows = [(row["timestamp"], float(row["close"])) for row in csv.DictReader(f)]
half = MANIFEST["params"]["half"]
centred = {}
for i, (t, _) in enumerate(rows):
    window = [c for _, c in rows[max(0, i - half):i + half + 1]]
    centred[t] = sum(window) / len(window)


def on_data(ctx, history):
    mean = centred.get(ctx.bar.time.strftime("%Y-%m-%dT%H:%M:%SZ"))
    if mean is None:
        return
    held = ctx.position(ctx.symbol)
    if held == 0 and ctx.bar.close < mean:
        ctx.buy(ctx.symbol, int(ctx.cash * 0.5 / ctx.bar.close))
    elif held > 0 and ctx.bar.close > mean:
        ctx.sell(ctx.symbol, held)
