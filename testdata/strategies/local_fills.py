"""Exercises the fills a worker delivers itself (a run of one symbol)
against the host's: market orders every few bars, some of them rejected
(too big for the cash, or beyond the position unless shorts are allowed), a
limit order now and then and its cancel, two orders in one call, orders
from on_execution. Its metadata is a digest of everything it saw, bar by
bar and execution by execution. mode=raise fails at bar `at`; mode=hang
loops there until its time limit."""
import hashlib
import time

MANIFEST = {"name": "local-fills", "params": {"mode": "ok", "at": 0, "qty": 3.5}, "history": 8}
seen = hashlib.sha256()
bars = 0
limit_id = None


def note(*xs):
    seen.update(repr(xs).encode())


def on_data(ctx, history):
    global bars, limit_id
    bars += 1
    note("bar", bars, ctx.time, ctx.cash, ctx.position(ctx.symbol), len(history), history.close, ctx.bar.close, ctx.equity)
    if bars == ctx.params["at"]:
        if ctx.params["mode"] == "raise":
            raise RuntimeError("boom at bar %d" % bars)
        if ctx.params["mode"] == "hang":
            while True:
                time.sleep(0.01)
    qty = ctx.params["qty"]
    k = bars % 17
    if k in (1, 2, 4):
        ctx.buy(ctx.symbol, qty)
    elif k == 3:
        ctx.sell(ctx.symbol, qty / 2)
    elif k == 5:
        ctx.sell(ctx.symbol, ctx.position(ctx.symbol) + 1)  # beyond the position
    elif k == 7:
        ctx.buy(ctx.symbol, 1e9)  # beyond the cash
    elif k == 9:
        limit_id = ctx.buy(ctx.symbol, 1, limit=ctx.bar.close * 0.999)
    elif k == 11 and limit_id is not None:
        ctx.cancel(limit_id)
        limit_id = None
    elif k == 13:
        ctx.buy(ctx.symbol, 1)
        ctx.buy(ctx.symbol, 1)
    elif k == 15:
        ctx.sell(ctx.symbol, 0.1)


def on_execution(ctx, x):
    note("exec", x.order_id, x.symbol, x.side, x.qty, x.price, x.fee, x.status, x.reason, x.time,
         ctx.cash, ctx.position(x.symbol), ctx.time, ctx.bar.close)
    if x.status == "filled" and x.side == "buy" and x.order_id % 5 == 0:
        ctx.sell(x.symbol, x.qty)


def on_finish(ctx):
    return {"seen": seen.hexdigest(), "bars": bars, "cash": ctx.cash, "equity": ctx.equity}
