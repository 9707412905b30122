#!/usr/bin/env python3
"""Throughput of stratbench against the in-process Python floor.

    python3 bench/bench.py [--bars N] [--runs R] [--keep DIR]

Generates N deterministic 1-minute bars of one symbol (bench/gen_bars.py),
then runs the same SMA-crossover strategy (fast 10, slow 30, market orders,
all-in sizing: backtest/testdata/sma_cross.py) R times each through

  - the floor: bench/floor.py, a plain in-process Python loop over the CSV
    with the same fill model, where nothing stands between data and hook;
  - stratbench --ci: CSV to report, supervised worker, every limit enforced.

It checks that both give the same fills, final cash, positions and final
equity, and prints the median wall time of each, the throughput ratio
(floor time / stratbench time: above 1 means stratbench is faster) and
stratbench's own peak RSS (VmHWM of the stratbench process, not the worker).
Exit status 1 when the results differ.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
STRATEGY = os.path.join(ROOT, "backtest", "testdata", "sma_cross.py")


def vm_hwm_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def timed(cmd, env=None, watch_rss=False):
    """Runs cmd; returns (wall seconds, stdout, peak VmHWM in KiB of the process itself)."""
    peak = [0]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env)
    done = threading.Event()

    def poll():
        while not done.wait(0.005):
            peak[0] = max(peak[0], vm_hwm_kib(proc.pid))

    watcher = threading.Thread(target=poll) if watch_rss else None
    if watcher:
        watcher.start()
    out, _ = proc.communicate()
    elapsed = time.perf_counter() - start
    done.set()
    if watcher:
        watcher.join()
    if proc.returncode != 0:
        sys.exit("bench: %s exited with %d" % (cmd[0], proc.returncode))
    return elapsed, out, peak[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bars", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", help="folder for the data and the binary (reused between invocations)")
    args = ap.parse_args()

    work = args.keep or tempfile.mkdtemp(prefix="stratbench-bench-")
    os.makedirs(work, exist_ok=True)
    data = os.path.join(work, "bars-%d.csv" % args.bars)
    if not os.path.exists(data):
        print("generating %d bars → %s" % (args.bars, data), file=sys.stderr)
        subprocess.run([sys.executable, os.path.join(HERE, "gen_bars.py"), str(args.bars), data], check=True)
    binary = os.path.join(work, "stratbench")
    subprocess.run(["go", "build", "-o", binary, "."], cwd=ROOT, check=True)
    env = dict(os.environ, STRATBENCH_HOME=os.path.join(work, "home"))

    floor_times, sb_times, sb_rss = [], [], []
    floor = report = None
    for run in range(args.runs):
        t, out, _ = timed([sys.executable, os.path.join(HERE, "floor.py"), STRATEGY, data, "--json"])
        floor_times.append(t)
        floor = json.loads(out)
        t, out, rss = timed([binary, "--ci", "--output", "json", "--data", data, STRATEGY], env=env, watch_rss=True)
        sb_times.append(t)
        sb_rss.append(rss)
        report = json.loads(out)
        print("run %d: floor %.2f s, stratbench %.2f s" % (run + 1, floor_times[-1], sb_times[-1]), file=sys.stderr)

    m = report["metrics"]
    same = (m["fills"] == floor["fills"] and m["final_cash"] == floor["cash"]
            and m["positions"] == floor["positions"] and m["final_equity"] == floor["final_equity"])
    f, s = statistics.median(floor_times), statistics.median(sb_times)
    print("bars                 %d (1 symbol, 1-minute, %s)" % (args.bars, os.path.basename(data)))
    print("fills                floor %d, stratbench %d" % (floor["fills"], m["fills"]))
    print("final equity         floor %r, stratbench %r" % (floor["final_equity"], m["final_equity"]))
    print("results              %s" % ("identical" if same else "DIFFERENT"))
    print("floor                %.2f s median of %d  (%.0f bars/s)" % (f, args.runs, args.bars / f))
    print("stratbench --ci      %.2f s median of %d  (%.0f bars/s)" % (s, args.runs, args.bars / s))
    print("ratio                %.2f× the floor's throughput (floor time / stratbench time)" % (f / s))
    print("stratbench peak RSS  %.1f MiB (the stratbench process, max of %d runs)" % (max(sb_rss) / 1024, args.runs))
    print("on_data in worker    %.0f ms total, p50 %.4f ms" % (report["hooks"]["on_data"]["total_ms"],
                                                            report["hooks"]["on_data"]["p50_ms"]))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
