"""Cross-sectional momentum: every `every` timestamps, rank the universe by
its return over the last `lookback` timestamps and hold the `top` best, the
same `notional` each; sell what dropped out first, then buy what came in.

    stratbench --ci --data python/example/universe.csv python/example/rotation.py

ctx.panel("close", n) is the last n timestamps' closes of every symbol, one
column per symbol (ctx.symbols order), NaN where a symbol had no bar: a
symbol without a bar now or `lookback` timestamps ago is not ranked. Orders
placed in one call fill at the next timestamp in the order they were placed,
so the sales free the cash before the buys spend it.
"""

import numpy as np

MANIFEST = {
    "name": "momentum-rotation",
    "params": {"lookback": 60, "every": 30, "top": 3, "notional": 15000.0},
    "history": 120,  # bars kept per symbol, and the most timestamps a panel has
}

calls = 0
pending = {}  # symbol -> orders not filled yet


def on_bars(ctx, bars):
    global calls
    calls += 1
    p = ctx.params
    if calls % p["every"]:
        return
    close = ctx.panel("close", p["lookback"] + 1)
    if len(close) <= p["lookback"]:
        return
    momentum = close[-1] / close[0] - 1.0  # NaN where either end has no bar
    ranked = sorted((k for k in range(len(ctx.symbols)) if not np.isnan(momentum[k])),
                    key=lambda k: (-momentum[k], k))
    best = set(ranked[: p["top"]])
    for k, sym in enumerate(ctx.symbols):
        if k not in best and ctx.position(sym) > 0 and not pending.get(sym):
            ctx.sell(sym, ctx.position(sym))
            pending[sym] = 1
    for k in sorted(best):
        sym = ctx.symbols[k]
        if ctx.position(sym) == 0 and not pending.get(sym):
            qty = int(p["notional"] / float(close[-1, k]))
            if qty > 0:
                ctx.buy(sym, qty)
                pending[sym] = 1


def on_execution(ctx, execution):
    pending[execution.symbol] = 0
    if execution.status == "rejected":
        print("order %d %s %s %g rejected: %s" % (execution.order_id, execution.side, execution.symbol,
                                                  execution.qty, execution.reason))
