"""SMA crossover with limit orders and cancels, for cross-checking the fill model.

On a buy signal (flat, fast SMA above slow) it bids offset below the close;
on a sell signal (long, fast below slow) it offers offset above the close. An
order not filled within `patience` bars of its symbol is cancelled.
on_execution forgets the order once it filled, was rejected or was cancelled.
"""

import math

MANIFEST = {
    "name": "limit-cross",
    "params": {"fast": 5, "slow": 20, "offset": 0.002, "patience": 5},
    "history": 32,
}

working = {}  # symbol -> [order id or None, bars since it was placed]


def on_execution(ctx, execution):
    w = working.get(execution.symbol)
    if w is not None and w[0] == execution.order_id:
        w[0] = None


def on_data(ctx, history):
    p = ctx.params
    w = working.setdefault(ctx.symbol, [None, 0])
    if w[0] is not None:
        w[1] += 1
        if w[1] == p["patience"]:
            ctx.cancel(w[0])
        return
    if len(history) < p["slow"]:
        return
    closes = history.close
    fast_ma = math.fsum(closes[-p["fast"]:]) / p["fast"]
    slow_ma = math.fsum(closes[-p["slow"]:]) / p["slow"]
    position = ctx.position(ctx.symbol)
    close = ctx.bar.close
    if position == 0 and fast_ma > slow_ma:
        qty = int(0.99 * ctx.cash / close)
        if qty > 0:
            w[0], w[1] = ctx.buy(ctx.symbol, qty, limit=close * (1 - p["offset"])), 0
    elif position > 0 and fast_ma < slow_ma:
        w[0], w[1] = ctx.sell(ctx.symbol, position, limit=close * (1 + p["offset"])), 0
