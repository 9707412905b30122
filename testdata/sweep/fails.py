"""A sweep whose runs end in different ways, for the sweep view's rows of
failed runs: FAIL picks how a run ends at bar 30 ("none" passes,
"exception" raises, "timeout" hangs on_data past its 5 s limit, "crash"
kills the worker with SIGSEGV), PERIOD is a moving average's, so that the
runs that pass differ."""
import os
import signal
import time

MANIFEST = {
    "name": "sweep-fails",
    "params": {"fail": "none", "period": 10},
    "history": 50,
}


def on_data(ctx, history):
    fail, period = ctx.params["fail"], ctx.params["period"]
    if len(history) == 30:
        if fail == "exception":
            raise KeyError("no column 'vwap' in the bars (period=%d)" % period)
        if fail == "timeout":
            while True:
                time.sleep(1)
        if fail == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
    if len(history) < period:
        return
    mean = sum(history.close[-period:]) / period
    held = ctx.position(ctx.symbol)
    if held == 0 and ctx.bar.close > mean:
        qty = int(ctx.cash * 0.5 / ctx.bar.close)
        if qty > 0:
            ctx.buy(ctx.symbol, qty)
    elif held > 0 and ctx.bar.close < mean:
        ctx.sell(ctx.symbol, held)
