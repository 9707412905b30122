"""Checks the list history's column views against the bars served, bar by
bar: each view, once first read (close at the first bar, high at bar 5,000,
low at bar 9,000, volume at the last bars; open never, only through
ctx.bar), must hold exactly the window's values as ctx.bar gave them, in
lists of Python numbers that the strategy may change without changing the
history. The views are first read in different batches (the first batch
holds 4,096 bars), so a column kept as the batch sent it until then is
made a list after batches were added to it and its served bars dropped.
It also says what the columns are kept as at the end (the history's own
attributes, not the API): open, never read as a view, stays the batch's
array of machine numbers."""
import collections

MANIFEST = {"history": 50}

seen = {}  # symbol: the last 50 bars as ctx.bar gave them
counts = collections.Counter()  # symbol: bars served
checked = collections.Counter()  # view: windows compared
wrong = []
FIELDS = {"close": 0, "high": 1, "low": 2, "volume": 3}
FIRST = {"close": 1, "high": 5000, "low": 9000, "volume": 10070}


def on_data(ctx, history):
    b = ctx.bar
    window = seen.setdefault(ctx.symbol, collections.deque(maxlen=50))
    window.append((b.close, b.high, b.low, b.volume, b.open))
    counts[ctx.symbol] += 1
    n = counts[ctx.symbol]
    for name, k in FIELDS.items():
        if n < FIRST[name]:
            continue
        view = getattr(history, name)
        want = [bar[k] for bar in window]
        if type(view) is not list or view != want or any(type(x) is not float for x in view):
            if len(wrong) < 5:
                wrong.append([ctx.symbol, n, name, repr(view[-3:]), repr(want[-3:])])
        view.append(-1.0)  # the strategy's own list
        view[0] = -2.0
        checked[name] += 1


def on_finish(ctx):
    h = ctx.history(ctx.symbols[0])
    kinds = {name: type(getattr(h, name[0])).__name__ for name in ("open", "close")}
    return {"checked": dict(checked), "wrong": wrong, "bars": dict(counts), "kinds": kinds}
