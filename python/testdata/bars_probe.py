"""Exercises on_bars over three symbols; on_finish returns what it saw.
bars_probe_numpy.py runs it with numpy, and the panels."""
import math
import sys

MANIFEST = {"name": "bars-probe", "history": 3}

seen = []
kept = None  # the first call's bars, kept past its call
kept_then = None  # what it held during that call
executions = []


def _num(x):
    return None if x != x else x  # NaN is no JSON


def on_bars(ctx, bars):
    global kept, kept_then
    if kept is None:
        # The first call's bars, kept and not read here: the bridge must
        # make its bars when the call returns.
        kept, kept_then = bars, {s: ctx.history(s).close[-1] for s in bars}
        seen.append([ctx.time.isoformat(), list(bars), list(kept_then.values()),
                     {s: list(ctx.history(s).close) for s in ctx.symbols}, ctx.cash])
        if "numpy" in sys.modules:
            seen[-1].append([[_num(float(v)) for v in r] for r in ctx.panel("close", 3)])
        return
    assert ctx.symbol is None and ctx.bar is None
    assert ctx.symbols == ("A", "B", "C") and isinstance(ctx.symbols, tuple)
    assert len(bars) == len(list(bars)) and all(s in bars for s in bars) and "Z" not in bars and 7 not in bars
    for s in bars:
        assert bars[s].time == ctx.time
        assert ctx.history(s)[-1].close == bars[s].close
    for s in ctx.symbols:
        h = ctx.history(s)
        assert h is ctx.history(s)
        if s not in bars:
            assert len(h) == 0 or h[-1].time < ctx.time
            try:
                bars[s]
            except KeyError:
                pass
            else:
                raise AssertionError("bars[%r] of a symbol without a bar" % s)
    row = [ctx.time.isoformat(), list(bars), [bars[s].close for s in bars],
           {s: list(ctx.history(s).close) for s in ctx.symbols}, ctx.cash]
    if "numpy" in sys.modules:
        panel = ctx.panel("close", 3)
        assert panel.dtype.name == "float64" and not panel.flags.writeable and panel.shape[1] == 3
        row.append([[_num(float(v)) for v in r] for r in panel])
    seen.append(row)
    if len(seen) == 2:
        ctx.buy("C", 1)
        ctx.sell("A", 2)


def on_execution(ctx, execution):
    executions.append([execution.order_id, execution.symbol, ctx.symbol, ctx.time.isoformat(), ctx.cash])


def on_finish(ctx):
    errors = []
    if {s: kept[s].close for s in kept} != kept_then or list(kept) != list(kept_then):
        errors.append("the kept bars changed: %r, then %r" % (kept_then, dict(kept)))
    for name, call in (("panel", lambda: ctx.panel("close", 4)), ("panel", lambda: ctx.panel("price", 1)),
                       ("history", lambda: ctx.history("Z"))):
        try:
            call()
        except Exception as exc:
            errors.append("%s: %s: %s" % (name, type(exc).__name__, exc))
    return {"seen": seen, "executions": executions, "errors": errors, "time": ctx.time.isoformat()}
