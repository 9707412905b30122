"""Planted randomness (check_test.go): it flips its position at random,
with a generator it never seeds."""
import random

MANIFEST = {"name": "unseeded-random", "params": {}, "history": 1}

rng = random.Random()


def on_data(ctx, history):
    held = ctx.position(ctx.symbol)
    if rng.random() < 0.05:
        if held == 0:
            ctx.buy(ctx.symbol, 10)
        else:
            ctx.sell(ctx.symbol, held)
