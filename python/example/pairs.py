"""A pairs trade on the z-score of a spread: two symbols that move together
(ACME and BOLT in python/example/universe.csv) drift apart and come back.
The spread is the log of their price ratio; its z-score is its distance from
its mean over the last `window` timestamps at which both traded, in standard
deviations. Beyond `entry`, sell the dear one and buy the cheap one, the
same `notional` each; back within `exit`, close both.

    stratbench --ci --data python/example/universe.csv --allow-short python/example/pairs.py

It sells short, so it needs --allow-short. on_bars gets every symbol's bar
of one timestamp in one call: both legs' prices are of the same minute, and
a minute at which one of them has no bar is skipped. Plain Python: no numpy.
"""

import math
from collections import deque

MANIFEST = {
    "name": "pairs-zscore",
    "params": {"a": "ACME", "b": "BOLT", "window": 60, "entry": 2.0, "exit": 0.5, "notional": 20000.0},
}

spreads = None  # the last `window` spreads
pending = set()  # ids of orders not filled yet
holding = 0  # +1: long a and short b; -1: short a and long b; 0: flat


def on_bars(ctx, bars):
    global spreads, holding
    p = ctx.params
    a, b = p["a"], p["b"]
    if a not in bars or b not in bars:
        return  # one leg did not trade this minute
    if spreads is None:
        spreads = deque(maxlen=p["window"])
    pa, pb = bars[a].close, bars[b].close
    spreads.append(math.log(pa / pb))
    if len(spreads) < p["window"] or pending:
        return
    n = len(spreads)
    mean = sum(spreads) / n
    std = math.sqrt(sum((x - mean) ** 2 for x in spreads) / (n - 1))
    if std == 0:
        return
    z = (spreads[-1] - mean) / std
    if holding == 0 and abs(z) > p["entry"]:
        qa, qb = int(p["notional"] / pa), int(p["notional"] / pb)
        if z > 0:  # a is dear: sell a, buy b
            pending.update((ctx.sell(a, qa), ctx.buy(b, qb)))
            holding = -1
        else:
            pending.update((ctx.buy(a, qa), ctx.sell(b, qb)))
            holding = 1
    elif holding != 0 and abs(z) < p["exit"]:
        for sym in (a, b):
            qty = ctx.position(sym)
            if qty > 0:
                pending.add(ctx.sell(sym, qty))
            elif qty < 0:
                pending.add(ctx.buy(sym, -qty))
        holding = 0


def on_execution(ctx, execution):
    pending.discard(execution.order_id)
    if execution.status == "rejected":
        print("order %d %s %s %g rejected: %s" % (execution.order_id, execution.side, execution.symbol,
                                                  execution.qty, execution.reason))
