"""Planted path dependence (check_test.go): the moving-average crossover of
the example, but it stops buying after its fifth trade, however much
history it has: a replay from a later start goes on trading where the full
run has stopped."""
MANIFEST = {"name": "path-dependent", "params": {"fast": 5, "slow": 20}, "history": 20}

bought = 0


def on_data(ctx, history):
    global bought
    fast, slow = ctx.params["fast"], ctx.params["slow"]
    if len(history) < slow:
        return
    closes = history.close
    fast_ma, slow_ma = sum(closes[-fast:]) / fast, sum(closes[-slow:]) / slow
    held = ctx.position(ctx.symbol)
    if held == 0 and fast_ma > slow_ma and bought < 5:
        bought += 1
        ctx.buy(ctx.symbol, 10)
    elif held > 0 and fast_ma < slow_ma:
        ctx.sell(ctx.symbol, held)
