#!/usr/bin/env python3
"""Several symbols: on_bars against a plain in-process loop, and ctx.panel's cost.

    python3 bench/multi_bench.py --python PY [--symbols 50] [--timestamps 100000] [--runs 3] [--keep DIR]
                                 [--only bars|panel]

PY must have numpy and pyarrow (./test.sh puts them in .venv-test/bin/python).
The data: SYMBOLS symbols x TIMESTAMPS 1-minute bars of a random walk, about
2 % of the bars missing, written once as Parquet (numpy's seeded generator).

bars: for each body (`pass`; the sum of every bar's close, through
bars.items()), R runs each, interleaved:

  - stratbench --ci with `on_bars(ctx, bars)` doing it: the wall time, and
    the report's hooks.on_bars.total_ms (the time inside the calls);
  - the floor: the same function in one plain Python loop in PY, over the
    same bars read from the file into Python lists first (timed apart),
    handed per timestamp a dict of symbol -> Bar built in the loop (a Bar
    as the bridge's: slots, a datetime), with no market, no fills, no
    worker.

panel: a strategy whose on_bars calls ctx.panel("close", n) once per call
(MANIFEST history 4000), timing the call itself in the worker with
perf_counter_ns, for n = 64 and n = 4000; beside it, in runs of their own,
the same call followed by a copy of the rows (what a panel that is not a
view would cost).

It prints medians.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

GEN = r"""
import sys
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

symbols, timestamps, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(20260105)
names = np.array(["S%03d" % k for k in range(symbols)])
steps = 1 + (rng.random((timestamps, symbols)) - 0.5) * 0.004
close = np.round(100 * np.cumprod(steps, axis=0), 4)
open_ = np.vstack([np.full((1, symbols), 100.0), close[:-1]])
high = np.maximum(open_, close) * (1 + rng.random((timestamps, symbols)) * 0.001)
low = np.minimum(open_, close) * (1 - rng.random((timestamps, symbols)) * 0.001)
keep = rng.random((timestamps, symbols)) >= 0.02
keep[:, 0] = True  # every timestamp has a bar
t = (1767225600 + 60 * np.arange(timestamps))[:, None].repeat(symbols, axis=1)
sym = np.broadcast_to(np.arange(symbols), (timestamps, symbols))
table = pa.table({
    "timestamp": pa.array(t[keep].astype(np.int64)),
    "symbol": pa.array(names[sym[keep]]),
    "open": open_[keep], "high": high[keep], "low": low[keep], "close": close[keep],
    "volume": np.full(int(keep.sum()), 100.0),
})
pq.write_table(table, out, row_group_size=1 << 16)
print(int(keep.sum()))
"""

BODIES = {
    "pass": "    pass\n",
    "closes": "    total = 0.0\n    for s, b in bars.items():\n        total += b.close\n",
}

STRATEGY = "def on_bars(ctx, bars):\n%s"

FLOOR = r"""
import datetime, sys, time
import numpy as np
import pyarrow.parquet as pq

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


class Bar:
    __slots__ = ("time", "open", "high", "low", "close", "volume")

    def __init__(self, t, o, h, l, c, v):
        self.time = t
        self.open = o
        self.high = h
        self.low = l
        self.close = c
        self.volume = v


def on_bars(ctx, bars):
%(body)s

loaded = time.perf_counter()
tab = pq.read_table(sys.argv[1])
t = tab.column("timestamp").to_numpy()
names = tab.column("symbol").to_pylist()
o, h, l, c, v = (tab.column(k).to_numpy().tolist() for k in ("open", "high", "low", "close", "volume"))
starts = np.flatnonzero(np.r_[True, t[1:] != t[:-1]]).tolist() + [len(t)]
times = t.tolist()
start = time.perf_counter()
for g in range(len(starts) - 1):
    i, j = starts[g], starts[g + 1]
    when = _EPOCH + datetime.timedelta(seconds=times[i])
    bars = {names[k]: Bar(when, o[k], h[k], l[k], c[k], v[k]) for k in range(i, j)}
    on_bars(None, bars)
end = time.perf_counter()
print(end - start, end - loaded)
"""

PANEL = r"""import time

import numpy as np

MANIFEST = {"history": 4000}

N = %(n)d
COPY = %(copy)s
spent = [0, 0]  # ns, calls timed


def on_bars(ctx, bars):
    t0 = time.perf_counter_ns()
    p = ctx.panel("close", N)
    if COPY:
        p = p.copy()
    t1 = time.perf_counter_ns()
    if len(p) == N:
        spent[0] += t1 - t0
        spent[1] += 1


def on_finish(ctx):
    return {"ns": spent[0] / max(1, spent[1]), "calls": spent[1]}
"""


def run(cmd, env=None):
    return subprocess.run(cmd, env=env, stdout=subprocess.PIPE, check=True).stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", required=True)
    ap.add_argument("--symbols", type=int, default=50)
    ap.add_argument("--timestamps", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep")
    ap.add_argument("--only", choices=("bars", "panel"))
    args = ap.parse_args()

    work = args.keep or tempfile.mkdtemp(prefix="stratbench-multi-")
    os.makedirs(work, exist_ok=True)
    data = os.path.join(work, "bars-%dx%d.parquet" % (args.symbols, args.timestamps))
    if not os.path.exists(data):
        gen = os.path.join(work, "gen.py")
        with open(gen, "w") as f:
            f.write(GEN)
        rows = run([args.python, gen, str(args.symbols), str(args.timestamps), data]).decode().strip()
        print("data: %s bars, %d symbols x %d timestamps" % (rows, args.symbols, args.timestamps))
    binary = os.path.join(work, "stratbench")
    subprocess.run(["go", "build", "-o", binary, "."], cwd=ROOT, check=True)
    env = dict(os.environ, STRATBENCH_HOME=os.path.join(work, "home"))

    if args.only in (None, "bars"):
        for name, body in BODIES.items():
            strategy = os.path.join(work, "bars_%s.py" % name)
            floor = os.path.join(work, "floor_%s.py" % name)
            with open(strategy, "w") as f:
                f.write(STRATEGY % body)
            with open(floor, "w") as f:
                f.write(FLOOR % {"body": body})
            wall, hook, fl, fload = [], [], [], []
            for _ in range(args.runs):
                start = time.perf_counter()
                out = json.loads(run([binary, "--ci", "--output", "json", "--python", args.python, "--data", data, strategy],
                                     env))
                wall.append(time.perf_counter() - start)
                assert out["status"] == "passed", out["failure"]
                s = out["hooks"]["on_bars"]
                assert s["count"] == args.timestamps, s
                hook.append(s["total_ms"] / 1000)
                loop, whole = (float(x) for x in run([args.python, floor, data]).split())
                fl.append(loop)
                fload.append(whole)
            w, h, f_, fw = statistics.median(wall), statistics.median(hook), statistics.median(fl), statistics.median(fload)
            per = 1e6 / args.timestamps
            print("body %-6s: stratbench --ci %.2f s (%.1f µs a timestamp; inside on_bars %.2f s); plain loop %.2f s "
                  "(%.1f µs), %.2f s with reading the Parquet file; stratbench / loop %.2f×, / loop and reading %.2f×"
                  % (name, w, w * per, h, f_, f_ * per, fw, w / f_, w / fw))

    if args.only in (None, "panel"):
        for n in (64, 4000):
            took = {}
            for copy in (False, True):
                strategy = os.path.join(work, "panel_%d_%s.py" % (n, "copy" if copy else "view"))
                with open(strategy, "w") as f:
                    f.write(PANEL % {"n": n, "copy": copy})
                took[copy] = []
            for _ in range(args.runs):
                for copy in (False, True):
                    strategy = os.path.join(work, "panel_%d_%s.py" % (n, "copy" if copy else "view"))
                    out = json.loads(run([binary, "--ci", "--output", "json", "--python", args.python, "--data", data,
                                          strategy], env))
                    assert out["status"] == "passed", out["failure"]
                    took[copy].append(out["metadata"]["ns"])
            print("ctx.panel(\"close\", %d) over %d symbols: %.2f µs a call (with a copy of the rows: %.2f µs)" % (
                n, args.symbols, statistics.median(took[False]) / 1000, statistics.median(took[True]) / 1000))
    return 0


if __name__ == "__main__":
    sys.exit(main())
