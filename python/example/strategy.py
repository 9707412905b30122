"""Example strategy: a simple moving-average crossover, one position per symbol.

stratbench re-runs this file every time you save it. Try changing the params,
printing something in on_data, or raising an exception to see the workbench
react. The API is in stratbench's README ("Writing a strategy"); numpy_strategy.py
beside this file is the same strategy written with numpy.

What its figures mean: the bundled sample data is one week of synthetic
1-minute bars, kept short so that every save re-runs at once. The annualised
figures (sharpe, cagr, calmar, sortino, volatility) extrapolate that week to a
year: a Sharpe near 20 and a CAGR of thousands of percent say only that a
week is far too short to annualise, and stratbench marks them ~ (any span
under 90 days). Read total_return, max_drawdown, trades and win_rate here;
for annualised figures that mean something, run it on a year or more of your
own bars (--data bars.csv).
"""

MANIFEST = {
    "name": "sma-cross-example",
    "params": {"fast": 10, "slow": 30, "allocation": 0.45},
    "history": 60,
}


def sma(values, n):
    """Mean of the last n values."""
    window = values[-n:]
    return sum(window) / len(window)


def on_data(ctx, history):
    fast, slow = ctx.params["fast"], ctx.params["slow"]
    if len(history) < slow:
        return  # warming up: not enough bars for the slow average yet

    closes = history.close
    fast_ma, slow_ma = sma(closes, fast), sma(closes, slow)
    held = ctx.position(ctx.symbol)

    if held == 0 and fast_ma > slow_ma:
        budget = ctx.cash * ctx.params["allocation"]
        qty = int(budget / ctx.bar.close)
        if qty > 0:
            ctx.buy(ctx.symbol, qty)
    elif held > 0 and fast_ma < slow_ma:
        ctx.sell(ctx.symbol, held)


def on_execution(ctx, execution):
    if execution.status != "filled":
        print(f"{execution.time:%Y-%m-%d %H:%M} {execution.symbol}: order {execution.order_id} "
              f"{execution.status}: {execution.reason}")


def on_finish(ctx):
    print(f"done: equity {ctx.equity:,.2f}, cash {ctx.cash:,.2f}")
    return {"note": "sma crossover example", "final_equity": round(ctx.equity, 2)}
