"""Probes the fills a worker delivers itself with several symbols against
the host's: market orders on bars `every` bars apart (on symbol `only`, or
any), a buy when flat and a sell of the whole position otherwise (shorts:
a sell when flat too, with short=1), orders from on_execution (exec_orders=1)
and orders at the bars listed in `also` (comma separated bar counts);
round_cash=1 rounds ctx.cash to cents at every bar; other=S orders on
symbol S instead, after setting ctx.symbol to S. Its
metadata is a digest of everything it saw, bar by bar and execution by
execution.

mode=raise / hang fail in on_data at bar `at`; raise_exec / hang_exec fail
in the on_execution of fill `at`; sleep sleeps sleep_ms in the on_data of
every bar of a symbol other than `only` while a fill is due; stop prints
"STOP ME" at bar `at` and waits there, reading the state page's stop word,
until the host asks it to stop (the test stops the job on that line), then
2 ms more.
busy_us spins that many microseconds in every on_data call, so that a
batch takes longer than the bridge's budget and the worker yields with
bars it holds."""
import hashlib
import mmap
import time

MANIFEST = {"name": "local-fills-probe",
            "params": {"mode": "ok", "at": 0, "every": 1, "only": "", "qty": 1.0, "short": 0, "exec_orders": 0,
                       "also": "", "sleep_ms": 0.0, "round_cash": 0, "other": "", "busy_us": 0},
            "history": 4}
seen = hashlib.sha256()
bars = 0
fills = 0
due = False  # an order of this strategy is open


def note(*xs):
    seen.update(repr(xs).encode())


def on_data(ctx, history):
    global bars, due
    bars += 1
    p = ctx.params
    if p["busy_us"]:
        spin = time.perf_counter() + p["busy_us"] / 1e6
        while time.perf_counter() < spin:
            pass
    note("bar", bars, ctx.symbol, ctx.time, ctx.cash, ctx.position(ctx.symbol), len(history), history.close, ctx.equity)
    if bars == p["at"]:
        if p["mode"] == "raise":
            raise RuntimeError("boom at bar %d" % bars)
        if p["mode"] == "hang":
            while True:
                time.sleep(0.01)
        if p["mode"] == "stop":
            print("STOP ME", flush=True)
            page = memoryview(mmap.mmap(5, 4096, prot=mmap.PROT_READ)).cast("Q")
            end = time.time() + 30
            while page[1] == 0 and time.time() < end:
                time.sleep(0.001)
            # Past the bridge's next look for a stop (once a millisecond):
            # the call after which it sees the stop is this one.
            time.sleep(0.002)
            return
    if p["round_cash"]:
        # A strategy's own bookkeeping on ctx.cash (documented as the
        # cash, not as read-only): the market's cash is the host's.
        ctx.cash = round(ctx.cash, 2)
    if p["mode"] == "sleep" and due and ctx.symbol != p["only"]:
        time.sleep(p["sleep_ms"] / 1000)
    also = [int(x) for x in p["also"].split(",") if x]
    if p["only"] and ctx.symbol != p["only"] and bars not in also:
        return
    if bars % p["every"] != 0 and bars not in also:
        return
    if p["other"]:
        ctx.symbol = p["other"]
    pos = ctx.position(ctx.symbol)
    if pos > 0:
        ctx.sell(ctx.symbol, pos)
    elif pos < 0:
        ctx.buy(ctx.symbol, -pos)
    elif p["short"] and bars % 2:
        ctx.sell(ctx.symbol, p["qty"])
    else:
        ctx.buy(ctx.symbol, p["qty"])
    due = True


def on_execution(ctx, x):
    global fills, due
    fills += 1
    due = False
    note("exec", fills, x.order_id, x.symbol, x.side, x.qty, x.price, x.fee, x.status, x.reason, x.time,
         ctx.cash, ctx.position(x.symbol), ctx.time, ctx.symbol, ctx.bar.close)
    p = ctx.params
    if fills == p["at"]:
        if p["mode"] == "raise_exec":
            raise RuntimeError("boom at fill %d" % fills)
        if p["mode"] == "hang_exec":
            while True:
                time.sleep(0.01)
    if p["exec_orders"] and x.status == "filled" and fills % 3 == 0:
        ctx.sell(x.symbol, x.qty) if x.side == "buy" else ctx.buy(x.symbol, x.qty)
        due = True


def on_finish(ctx):
    return {"seen": seen.hexdigest(), "bars": bars, "fills": fills, "cash": ctx.cash, "equity": ctx.equity}
