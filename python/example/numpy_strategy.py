"""Example strategy, numpy style: the moving-average crossover of strategy.py
with numpy. Because this file imports numpy, history.close and the other
columns are read-only float64 numpy arrays (history.time is datetime64[ns],
UTC), so slices have .mean(), np.diff works, and history.df is a pandas
DataFrame when pandas is installed. The API is in stratbench's README
("Writing a strategy").
"""
import numpy as np

MANIFEST = {
    "name": "sma-cross-numpy-example",
    "params": {"fast": 10, "slow": 30, "allocation": 0.45},
    "history": 60,
}


def on_data(ctx, history):
    fast, slow = ctx.params["fast"], ctx.params["slow"]
    if len(history) < slow:
        return  # warming up: not enough bars for the slow average yet

    closes = history.close  # a numpy array of the last 60 closes, oldest first
    fast_ma, slow_ma = closes[-fast:].mean(), closes[-slow:].mean()
    held = ctx.position(ctx.symbol)

    if held == 0 and fast_ma > slow_ma:
        qty = int(ctx.cash * ctx.params["allocation"] / ctx.bar.close)
        if qty > 0:
            ctx.buy(ctx.symbol, qty)
    elif held > 0 and fast_ma < slow_ma:
        ctx.sell(ctx.symbol, held)


def on_finish(ctx):
    returns = np.diff(np.log([ctx.equity]))  # numpy is yours to use anywhere
    return {"note": "sma crossover, numpy style", "final_equity": round(ctx.equity, 2), "log_returns": len(returns)}
