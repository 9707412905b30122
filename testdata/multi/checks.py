"""Checks what on_bars sees over python/example/universe.csv, whose
timestamps miss some symbols' bars: one call per timestamp, in time order;
bars holds the symbols with a bar then, each the last bar of
ctx.history(symbol); the others' histories end earlier; a bars kept past
its call does not change; with numpy (checks_numpy.py), the last row of
ctx.panel is the bars' closes, NaN for the others. It trades a share at
most timestamps, so that fills cut the batches everywhere. on_finish
returns the count of calls and the first errors."""
import math
import sys

MANIFEST = {"name": "checks", "history": 50}

calls = 0
times = []
errors = []
kept = None
kept_closes = None


def check(ok, what):
    if not ok and len(errors) < 20:
        errors.append("call %d: %s" % (calls, what))


def on_bars(ctx, bars):
    global calls, kept, kept_closes
    calls += 1
    t = ctx.time
    check(not times or times[-1] < t, "time %s after %s" % (t, times[-1] if times else None))
    times.append(t)
    check(ctx.symbol is None and ctx.bar is None, "ctx.symbol %r, ctx.bar %r" % (ctx.symbol, ctx.bar))
    check(0 < len(bars) <= len(ctx.symbols), "%d bars" % len(bars))
    for s in ctx.symbols:
        h = ctx.history(s)
        if s in bars:
            b = bars[s]
            check(b.time == t and h[-1].time == t and h[-1].close == b.close and h.close[-1] == b.close,
                  "%s: bar %r, history ends %r" % (s, b, h[-1] if len(h) else None))
        else:
            if len(h) and h[-1].time >= t:
                check(False, "%s has no bar but its history ends at %s" % (s, h[-1].time))
    if kept is not None:
        check({s: kept[s].close for s in kept} == kept_closes, "a kept bars changed")
    kept, kept_closes = bars, {s: bars[s].close for s in bars}
    if "numpy" in sys.modules:
        row = ctx.panel("close", 5)[-1]
        for k, s in enumerate(ctx.symbols):
            if s in bars:
                check(row[k] == bars[s].close, "panel %s %r, bar %r" % (s, row[k], bars[s].close))
            else:
                check(math.isnan(row[k]), "panel %s %r without a bar" % (s, row[k]))
    if calls % 3:
        last = list(bars)[-1]
        if ctx.position(last) > 0:
            ctx.sell(last, ctx.position(last))
        else:
            ctx.buy(last, 1)


def on_finish(ctx):
    return {"calls": calls, "errors": errors, "first": times[0].isoformat() if times else None,
            "last": times[-1].isoformat() if times else None}
