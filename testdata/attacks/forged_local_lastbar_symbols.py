# attack: with two symbols, a market order on the data's last bar (TWO's), whose fill the bridge says it delivered itself (its Worker's yield patched to fill it at the bar's close and call on_execution), though the market has no next bar to fill it at: the host's driver ends the replay right after the order, and the claim must not outlive it
# sandbox: both
# args: --data testdata/attacks/helpers/two_symbols.csv
# expect: exit=1 status=failed failure.kind=protocol failure.hook=on_data failure.event_index=199
# message: the worker filled order 1 itself at
import gc
import time

MANIFEST = {"params": {"symbol": "TWO", "last": 100}}  # the data's last bar: the symbol's 100th
bars = 0
seen = 0  # bars of the symbol
forge = False


def patch(worker):
    real = worker._yield

    def forged(through, durations, stopped):
        # The yield after the last bar's call, which placed the order: the
        # bridge "delivers" its fill, as if the batch held a next bar.
        global forge
        ctx = worker.ctx
        if forge and ctx._market is not None and ctx._issued == 1:
            forge = False
            op, symbol, qty, oid = ctx._market
            hist = worker.histories[ctx._symbols.index(symbol)]
            j = hist.end - 1
            price = float(hist.c[j])
            position = ctx._positions.get(symbol, 0) + qty
            fill = (oid, op, symbol, qty, price, 0.0, worker.cash - qty * price, float(position), int(hist.t[j]) + 60 * 10**9)
            worker.carried += 1
            ctx._issued, ctx._market = 0, None
            answered = worker._deliver(through, fill, through + 1, durations, time.perf_counter_ns() + 10**9)
            through = answered[0] - 1
        return real(through, durations, stopped)

    worker._yield = forged


def on_data(ctx, history):
    # The patch goes in a call of its own: gc.get_objects() can take
    # longer than a batch's time budget on a loaded machine.
    global bars, seen, forge
    bars += 1
    if ctx.symbol == ctx.params["symbol"]:
        seen += 1
    if bars == 1:
        for o in gc.get_objects():
            if type(o).__name__ == "Worker" and getattr(o, "local", None) is not None:
                patch(o)
        return
    if ctx.symbol == ctx.params["symbol"] and seen == ctx.params["last"]:
        forge = True
        print("ATTACK %.6f" % time.time())
        ctx.buy(ctx.symbol, 1)


def on_execution(ctx, execution):
    # Told of a fill the market never made.
    print("FILLED %s at %s" % (execution.order_id, execution.price))
