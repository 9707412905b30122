"""The same windows as columns.py through the list history (no numpy), for
comparison; numpy must stay out of sys.modules."""
import sys

MANIFEST = {"history": 50, "params": {"keep_at": 5}}

windows = []


def on_data(ctx, history):
    close = history.close
    assert isinstance(close, list)
    diffs = sum(b - a for a, b in zip(close, close[1:]))
    windows.append([ctx.symbol, len(close), close[0], close[-1], sum(close), diffs])


def on_finish(ctx):
    return {"windows": windows, "numpy_loaded": "numpy" in sys.modules}
