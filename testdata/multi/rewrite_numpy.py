"""Tries to make the arrays it is handed writable again (arr.flags.writeable
= True) and, where numpy lets it, writes into them: ctx.panel's rows and
ctx.history(symbol)'s columns must stay read-only, so that no write can
change what a later call serves (multi_symbol_test.go)."""
import numpy as np

MANIFEST = {"params": {}, "history": 8}
tried = 0
refused = 0
changed = []
seen = {}


def attempt(name, arr):
    global tried, refused
    tried += 1
    try:
        arr.flags.writeable = True
    except ValueError:
        refused += 1
        return
    arr[...] = -1.0 if arr.dtype.kind == "f" else 0
    changed.append(name)


def on_bars(ctx, bars):
    panel = ctx.panel("close", 4)
    # What an earlier call served must be what it was.
    for key, (arr, copy) in seen.items():
        if not np.array_equal(arr, copy, equal_nan=True):
            changed.append("served " + key)
    seen["panel"] = (panel, panel.copy())
    attempt("panel", panel)
    for s in ctx.symbols[:2]:
        h = ctx.history(s)
        attempt("history close", h.close)
        attempt("history time", h.time)


def on_finish(ctx):
    return {"tried": tried, "refused": refused, "changed": sorted(set(changed))[:10]}
