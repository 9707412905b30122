"""A strategy for the robustness tests (robustness_test.go): it holds a
random position, long, flat or short (90% of its equity), drawn again
with probability 1/20 a bar from a generator seeded by its seed param.
Run it with --allow-short.

The runs whose seed lies in [edge_from, edge_to) also know a pattern the
test plants in its data: every bar whose number is a multiple of `period`
rises by more than the walk's noise. They are long over each such bar
(bought at the bar before, sold at the bar itself, filling at the next
bars' opens, which the data makes the previous closes): a real edge,
found without looking ahead."""
import random

MANIFEST = {
    "name": "random-trader",
    "params": {"seed": 0, "edge_from": -1, "edge_to": -1, "period": 4},
    "history": 1,
}

rng = None
bar = -1
side = 0


def on_data(ctx, history):
    global rng, bar, side
    p = ctx.params
    if rng is None:
        rng = random.Random(p["seed"])
        side = rng.randrange(3) - 1
    bar += 1
    if rng.random() < 0.05:
        side = rng.randrange(3) - 1
    want = side
    if p["edge_from"] <= p["seed"] < p["edge_to"] and (bar + 1) % p["period"] == 0:
        want = 1
    held = ctx.position(ctx.symbol)
    have = (held > 0) - (held < 0)
    if want != have:
        delta = want * ctx.equity * 0.9 / ctx.bar.close - held
        if delta > 0:
            ctx.buy(ctx.symbol, delta)
        else:
            ctx.sell(ctx.symbol, -delta)
