"""What a data-analysis strategy does with its libraries, once, at its first
bar: numpy (OpenBLAS), pandas, pyarrow (writing Parquet: its reader needs
worker threads, which the sandbox refuses), matplotlib (Agg: PNG, SVG, PDF), SQLite with a file, numpy's
files and memory maps, in /tmp and in artifacts/. Each step records "ok" or
its error in the metadata: the sandbox's seccomp filter must refuse none of
what they need (its fcntl and ioctl allow-lists, flock, fallocate)."""
import os
import sqlite3
import tempfile
import traceback

# At import, under the startup limit: matplotlib builds its font cache in a
# fresh /tmp in the sandbox.
import matplotlib
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

steps = {}


def step(name):
    def run(fn):
        try:
            fn()
            steps[name] = "ok"
        except Exception:  # noqa: BLE001 - recorded for the test to show
            steps[name] = traceback.format_exc(limit=3)
        return fn
    return run


def on_data(ctx, history):
    if steps:
        return
    tmp = tempfile.mkdtemp()
    df = pd.DataFrame({"a": np.arange(1000), "b": np.random.default_rng(1).random(1000)})

    @step("numpy")
    def _():
        a = np.ones((300, 300))
        assert int((a @ a).sum()) == 27000000

    @step("pandas_csv")
    def _():
        df.to_csv(os.path.join(tmp, "x.csv"))
        assert len(pd.read_csv(os.path.join(tmp, "x.csv"))) == 1000

    @step("pyarrow_parquet")
    def _():
        path = ctx.artifact_path("x.parquet")
        pq.write_table(pa.Table.from_pandas(df), path)
        assert pq.read_metadata(path).num_rows == 1000

    @step("pandas_parquet")
    def _():
        df.to_parquet(os.path.join(tmp, "y.parquet"))
        assert pq.read_metadata(os.path.join(tmp, "y.parquet")).num_rows == 1000

    @step("matplotlib")
    def _():
        fig, ax = plt.subplots()
        ax.plot(df.a, df.b)
        for ext in ("png", "svg", "pdf"):
            fig.savefig(ctx.artifact_path("plot." + ext))
        plt.close(fig)

    @step("sqlite")
    def _():
        db = sqlite3.connect(ctx.artifact_path("db.sqlite"))
        db.execute("create table t (x)")
        db.executemany("insert into t values (?)", [(i,) for i in range(100)])
        db.commit()
        assert db.execute("select count(*) from t").fetchone() == (100,)
        db.close()

    @step("numpy_files")
    def _():
        a = np.arange(100000, dtype=np.float64)
        np.save(os.path.join(tmp, "a.npy"), a)
        assert np.load(os.path.join(tmp, "a.npy"), mmap_mode="r").sum() == a.sum()
        m = np.memmap(ctx.artifact_path("m.bin"), dtype=np.float64, mode="w+", shape=(1000,))
        m[:] = 1
        m.flush()
        del m

    @step("pickle")
    def _():
        df.to_pickle(os.path.join(tmp, "x.pkl"))
        assert pd.read_pickle(os.path.join(tmp, "x.pkl")).equals(df)


def on_finish(ctx):
    return steps
