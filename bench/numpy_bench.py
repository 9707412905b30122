#!/usr/bin/env python3
"""The numpy history: cost per bar against the window size, and against an in-process floor.

    python3 bench/numpy_bench.py --python PY [--bars N] [--runs R] [--windows 64,4000] [--keep DIR]

PY must have numpy (./test.sh puts one in .venv-test/bin/python). For each
history size H it runs, R times each and interleaved:

  - stratbench --ci with a numpy SMA strategy (`history.close[-n:].mean()`
    for n = 10 and 30, MANIFEST history H) over N bars of one symbol;
  - the floor: the same on_data function, in one plain Python loop in PY,
    handed a view of the same numpy arrays (the last H bars) per bar, with
    no fills and no worker: the least a numpy strategy can cost.

It prints the median times, stratbench's time for H=4000 over its time for
H=64 (O(1) access means close to 1), and stratbench's per-bar overhead over
the floor.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

STRATEGY = """import numpy as np

MANIFEST = {"history": %(history)d}


def on_data(ctx, history):
    close = history.close
    if len(close) >= 30:
        fast = close[-10:].mean()
        slow = close[-30:].mean()
        if fast > slow and ctx.position(ctx.symbol) == 0 and False:
            ctx.buy(ctx.symbol, 1)
"""

FLOOR = r"""
import sys, time
import numpy as np

path, history = sys.argv[1], int(sys.argv[2])
cols = np.loadtxt(path, delimiter=",", skiprows=1, usecols=(5,), dtype=np.float64)
close = np.ascontiguousarray(cols)
close.flags.writeable = False


class H:
    __slots__ = ("close",)


def on_data(ctx, history):
    close = history.close
    if len(close) >= 30:
        fast = close[-10:].mean()
        slow = close[-30:].mean()
        if fast > slow and False:
            pass


h = H()
start = time.perf_counter()
for i in range(len(close)):
    h.close = close[max(0, i + 1 - history) : i + 1]
    on_data(None, h)
print(time.perf_counter() - start)
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", required=True)
    ap.add_argument("--bars", type=int, default=200_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--windows", default="64,4000")
    ap.add_argument("--keep")
    args = ap.parse_args()

    work = args.keep or tempfile.mkdtemp(prefix="stratbench-numpy-")
    os.makedirs(work, exist_ok=True)
    data = os.path.join(work, "bars-%d.csv" % args.bars)
    if not os.path.exists(data):
        subprocess.run([sys.executable, os.path.join(HERE, "gen_bars.py"), str(args.bars), data], check=True)
    binary = os.path.join(work, "stratbench")
    subprocess.run(["go", "build", "-o", binary, "."], cwd=ROOT, check=True)
    env = dict(os.environ, STRATBENCH_HOME=os.path.join(work, "home"))
    floor = os.path.join(work, "floor.py")
    with open(floor, "w") as f:
        f.write(FLOOR)

    results = {}
    for h in [int(w) for w in args.windows.split(",")]:
        strategy = os.path.join(work, "numpy_sma_%d.py" % h)
        with open(strategy, "w") as f:
            f.write(STRATEGY % {"history": h})
        sb, fl, hook = [], [], []
        for _ in range(args.runs):
            start = time.perf_counter()
            out = subprocess.run([binary, "--ci", "--output", "json", "--python", args.python, "--data", data, strategy],
                                 env=env, stdout=subprocess.PIPE, check=True).stdout
            sb.append(time.perf_counter() - start)
            import json
            hook.append(json.loads(out)["hooks"]["on_data"]["total_ms"] / 1000)
            fl.append(float(subprocess.run([args.python, floor, data, str(h)], stdout=subprocess.PIPE,
                                           check=True).stdout))
        results[h] = (statistics.median(sb), statistics.median(hook), statistics.median(fl))
        print("history %5d: stratbench %.2f s (on_data total %.2f s), floor loop %.2f s" % ((h,) + results[h]))
    hs = sorted(results)
    lo, hi = results[hs[0]], results[hs[-1]]
    print("history %d / history %d, stratbench time: %.2f×" % (hs[-1], hs[0], hi[0] / lo[0]))
    for h in hs:
        sb, hook, fl = results[h]
        print("history %5d: per bar stratbench %.2f µs (on_data %.2f µs), floor %.2f µs; on_data / floor %.2f×" % (
            h, 1e6 * sb / args.bars, 1e6 * hook / args.bars, 1e6 * fl / args.bars, hook / fl))
    return 0


if __name__ == "__main__":
    sys.exit(main())
