"""numpy SMA crossover for bench/sweep_bench.py overhead: imports numpy, so
start-up (interpreter and imports) is a large part of a short run."""
import numpy as np

MANIFEST = {"name": "sweep-bench-numpy", "params": {"fast": 10, "slow": 30}, "history": 64}


def on_data(ctx, history):
    fast, slow = ctx.params["fast"], ctx.params["slow"]
    if len(history) < slow:
        return
    closes = history.close
    fast_ma, slow_ma = closes[-fast:].mean(), closes[-slow:].mean()
    held = ctx.position(ctx.symbol)
    if held == 0 and fast_ma > slow_ma:
        qty = int(0.99 * ctx.cash / ctx.bar.close)
        if qty > 0:
            ctx.buy(ctx.symbol, qty)
    elif held > 0 and fast_ma < slow_ma:
        ctx.sell(ctx.symbol, held)
