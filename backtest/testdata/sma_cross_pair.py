"""SMA crossover on two symbols, each given about half of the cash.

The regime-form crossover of sma_cross.py, per symbol, sized
int(0.495 * cash / close) so that both symbols can be held at once. Two buys
signalled at the same minute both see the cash before either fills, so the
second can still be rejected when prices gap up: on_execution counts those,
and on_finish reports the count.
"""

import math

MANIFEST = {
    "name": "sma-cross-pair",
    "params": {"fast": 10, "slow": 30},
    "history": 64,
}

rejected = {"count": 0}


def on_data(ctx, history):
    fast, slow = ctx.params["fast"], ctx.params["slow"]
    if len(history) < slow:
        return
    closes = history.close
    fast_ma = math.fsum(closes[-fast:]) / fast
    slow_ma = math.fsum(closes[-slow:]) / slow
    position = ctx.position(ctx.symbol)
    if position == 0 and fast_ma > slow_ma:
        qty = int(0.495 * ctx.cash / ctx.bar.close)
        if qty > 0:
            ctx.buy(ctx.symbol, qty)
    elif position > 0 and fast_ma < slow_ma:
        ctx.sell(ctx.symbol, position)


def on_execution(ctx, execution):
    if execution.status == "rejected":
        rejected["count"] += 1


def on_finish(ctx):
    return {"rejected": rejected["count"]}
