"""SMA crossover, regime form, for cross-checking stratbench against bench/floor.py.

Buy when flat and the fast SMA of the close is above the slow one; sell the
whole position when long and the fast SMA is below the slow one. Size:
int(0.99 * cash / close). The SMAs use math.fsum, which is correctly rounded,
so that an independent implementation computes bit-identical signals. It works
per symbol, on any number of symbols.
"""

import math

MANIFEST = {
    "name": "sma-cross",
    "params": {"fast": 10, "slow": 30},
    "history": 64,
}


def on_data(ctx, history):
    fast, slow = ctx.params["fast"], ctx.params["slow"]
    if len(history) < slow:
        return
    closes = history.close
    fast_ma = math.fsum(closes[-fast:]) / fast
    slow_ma = math.fsum(closes[-slow:]) / slow
    position = ctx.position(ctx.symbol)
    if position == 0 and fast_ma > slow_ma:
        qty = int(0.99 * ctx.cash / ctx.bar.close)
        if qty > 0:
            ctx.buy(ctx.symbol, qty)
    elif position > 0 and fast_ma < slow_ma:
        ctx.sell(ctx.symbol, position)
