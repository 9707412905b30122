"""The workbench's recorded fixtures (app/record_test.go): the example's
moving-average crossover, slowed down so that a snapshot of the run in
flight can be taken, with a little output on both streams."""
import sys
import time

MANIFEST = {
    "name": "workbench-demo",
    "params": {"fast": 10, "slow": 30, "allocation": 0.45},
    "history": 60,
}


def sma(values, n):
    window = values[-n:]
    return sum(window) / len(window)


warned = False


def on_data(ctx, history):
    global warned
    time.sleep(0.0005)
    fast, slow = ctx.params["fast"], ctx.params["slow"]
    if len(history) < slow:
        return
    closes = history.close
    fast_ma, slow_ma = sma(closes, fast), sma(closes, slow)
    held = ctx.position(ctx.symbol)
    if held == 0 and fast_ma > slow_ma:
        qty = int(ctx.cash * ctx.params["allocation"] / ctx.bar.close)
        if qty > 0:
            print(f"{ctx.time:%Y-%m-%d %H:%M} {ctx.symbol} buy {qty} @ {ctx.bar.close:.2f}")
            ctx.buy(ctx.symbol, qty)
    elif held > 0 and fast_ma < slow_ma:
        print(f"{ctx.time:%Y-%m-%d %H:%M} {ctx.symbol} sell {held} @ {ctx.bar.close:.2f}")
        ctx.sell(ctx.symbol, held)
    if not warned and len(history) == 60 and ctx.symbol == "SYNB":
        warned = True
        print("warning: SYNB spread wider than 5 bps", file=sys.stderr)


def on_execution(ctx, execution):
    if execution.status != "filled":
        print(f"order {execution.order_id} {execution.status}: {execution.reason}")


def on_finish(ctx):
    print(f"done: equity {ctx.equity:,.2f}, cash {ctx.cash:,.2f}")
    return {"note": "workbench demo", "final_equity": round(ctx.equity, 2)}
