"""A moving-average crossover for the sweep tests: deterministic, with
params to sweep. FAIL_AT makes one combination fail (an exception), and
SLOW_MS makes every bar take that long, so a test can stop a sweep while
its runs are in flight. It prints "first bar" on its first bar, which a
test waits for."""
import time

MANIFEST = {
    "name": "sweep-sma",
    "params": {"fast": 5, "slow": 20, "fail_at": -1, "slow_ms": 0.0},
    "history": 100,
}

seen = 0


def on_data(ctx, history):
    global seen
    seen += 1
    if seen == 1:
        print("first bar", ctx.params["fast"], ctx.params["slow"], flush=True)
    if ctx.params["fail_at"] == ctx.params["fast"]:
        raise ValueError("fast=%d is the combination that fails" % ctx.params["fast"])
    if ctx.params["slow_ms"] > 0:
        time.sleep(ctx.params["slow_ms"] / 1000.0)
    fast, slow = ctx.params["fast"], ctx.params["slow"]
    if len(history) < slow:
        return
    closes = history.close
    fast_ma = sum(closes[-fast:]) / fast
    slow_ma = sum(closes[-slow:]) / slow
    held = ctx.position(ctx.symbol)
    if held == 0 and fast_ma > slow_ma:
        qty = int(ctx.cash * 0.45 / ctx.bar.close)
        if qty > 0:
            ctx.buy(ctx.symbol, qty)
    elif held > 0 and fast_ma < slow_ma:
        ctx.sell(ctx.symbol, held)


def on_finish(ctx):
    print("on_finish ran", flush=True)
    return {"bars": seen}
