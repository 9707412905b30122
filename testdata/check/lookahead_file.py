"""Planted look-ahead (check_test.go): reads its data file, bars.csv beside
it, at import, and trades on the close a few bars later."""
import csv
import os

MANIFEST = {"name": "lookahead-file", "params": {"ahead": 5}, "history": 1}

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "bars.csv")) as f:
    closes = [(row["timestamp"], float(row["close"])) for row in csv.DictReader(f)]
at = {t: i for i, (t, _) in enumerate(closes)}


def on_data(ctx, history):
    i = at.get(ctx.bar.time.strftime("%Y-%m-%dT%H:%M:%SZ"))
    if i is None or i + ctx.params["ahead"] >= len(closes):
        return
    later = closes[i + ctx.params["ahead"]][1]
    held = ctx.position(ctx.symbol)
    if held == 0 and later > ctx.bar.close:
        ctx.buy(ctx.symbol, int(ctx.cash * 0.5 / ctx.bar.close))
    elif held > 0 and later < ctx.bar.close:
        ctx.sell(ctx.symbol, held)
