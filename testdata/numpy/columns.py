"""Checks the numpy history from inside: types, dtypes, read-only views that
never change once handed out, slices, df; records what it saw in the report's
metadata so the Go test can compare it with the list history of the same run."""
import numpy as np

MANIFEST = {"history": 50, "params": {"keep_at": 5}}

kept = None  # (event, array, copy of its values) kept from an early call
checks = {"calls": 0, "read_only": 0, "means": 0}
windows = []  # (symbol, len, first close, last close, sum of closes, mean of the last 10)


def on_data(ctx, history):
    global kept
    checks["calls"] += 1
    close = history.close
    for name in ("open", "high", "low", "close", "volume"):
        col = getattr(history, name)
        assert isinstance(col, np.ndarray) and col.dtype == np.float64, (name, type(col), col.dtype)
        assert len(col) == len(history)
    assert history.time.dtype == np.dtype("datetime64[ns]"), history.time.dtype
    assert history.time[-1] == np.datetime64(ctx.time.replace(tzinfo=None), "ns")
    assert close[-1] == ctx.bar.close == history[-1].close
    try:
        close[-1] = 0.0
    except ValueError:
        checks["read_only"] += 1
    if len(close) >= 10:
        assert abs(close[-10:].mean() - sum(close[-10:].tolist()) / 10) < 1e-9
        checks["means"] += 1
    if checks["calls"] == ctx.params["keep_at"]:
        kept = (checks["calls"], close, close.copy())
    windows.append([ctx.symbol, len(close), float(close[0]), float(close[-1]), float(close.sum()),
                    float(np.diff(close).sum()) if len(close) > 1 else 0.0])
    if checks["calls"] % 97 == 0:
        df = history.df
        assert df is history.df, "df is built at most once per call"
        assert list(df.columns) == ["open", "high", "low", "close", "volume"], list(df.columns)
        assert df.shape == (len(history), 5), df.shape
        assert str(df.index.tz) == "UTC" and df.index.name == "time", (df.index.tz, df.index.name)
        assert (df["close"].to_numpy() == close).all()
        assert df.index[-1].to_pydatetime() == ctx.time


def on_finish(ctx):
    _, array, values = kept
    checks["kept_unchanged"] = bool((array == values).all())
    return {"checks": checks, "windows": windows}
