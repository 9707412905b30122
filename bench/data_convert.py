#!/usr/bin/env python3
"""`stratbench data convert` of N CSV bars, then runs on the Parquet file against the CSV.

    python3 bench/data_convert.py STRATBENCH [--bars 10000000] [--runs 3] [--keep DIR]
                                  [--from T --to T]

It generates N deterministic 1-minute bars of two symbols as CSV
(bench/gen_bars.py), converts them with `STRATBENCH data convert CSV --out
PARQUET` (wall time, CPU time and peak RSS of stratbench: the process's
maximum resident set, from wait4), then runs a no-op strategy with
`--ci --output json --data FILE` on the CSV and on the converted file,
whole and, when --from and --to are given, in that window (wall time, CPU
time of stratbench and its worker, and the peak RSS of the stratbench
process itself: VmHWM polled every 5 ms, the worker not counted). Runs are
interleaved so that the machine's load falls on all alike; it prints the
medians (the largest peak) and checks every run replayed every bar.
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
sys.path.insert(0, HERE)
from data_replay import NOOP, run  # noqa: E402  (one --ci run, measured)


def convert(binary, csv, out, env):
    """Runs data convert; returns (wall s, CPU s, peak RSS KiB) of stratbench."""
    start = time.perf_counter()
    proc = subprocess.Popen([binary, "data", "convert", csv, "--out", out, "--output", "json"],
                            stdout=subprocess.PIPE, env=env)
    out_text = proc.stdout.read()
    _, status, ru = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit("data_convert: convert exited with %d" % proc.returncode)
    res = json.loads(out_text)
    return elapsed, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary")
    ap.add_argument("--bars", type=int, default=10_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", help="folder for the data (reused between invocations)")
    ap.add_argument("--from", dest="from_", help="a window's start, for runs on a window as well")
    ap.add_argument("--to", help="the window's end")
    args = ap.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="stratbench-data-convert-")
    os.makedirs(work, exist_ok=True)
    strategy = os.path.join(work, "noop.py")
    with open(strategy, "w") as f:
        f.write(NOOP)
    env = dict(os.environ, STRATBENCH_HOME=os.path.join(work, "home"))
    n = args.bars
    csv = os.path.join(work, "bars-%d-2.csv" % n)
    pq = os.path.join(work, "bars-%d-2.converted.parquet" % n)
    if not os.path.exists(csv):
        print("generating %d bars → %s" % (n, csv), file=sys.stderr)
        subprocess.run([sys.executable, os.path.join(HERE, "gen_bars.py"), str(n), csv, "--symbols", "2"], check=True)

    conv = []
    for _ in range(args.runs):
        wall, cpu, peak, res = convert(args.binary, csv, pq, env)
        if res["bars"] != n:
            sys.exit("data_convert: converted %d bars of %d" % (res["bars"], n))
        conv.append((wall, cpu, peak))
    print("data convert: %d bars, %s → %s (%.0f MiB → %.0f MiB, %d row groups)" % (
        n, os.path.basename(csv), os.path.basename(pq), os.path.getsize(csv) / 2**20, os.path.getsize(pq) / 2**20, res["row_groups"]))
    print("  wall %.2f s, cpu %.2f s, stratbench peak RSS %.1f MiB (medians; peak the largest)" % (
        statistics.median(c[0] for c in conv), statistics.median(c[1] for c in conv), max(c[2] for c in conv) / 1024))

    windows = [None]
    if args.from_ and args.to:
        windows.append((args.from_, args.to))
    cases = [(w, data) for w in windows for data in (csv, pq)]
    results = {i: [] for i in range(len(cases))}
    for _ in range(args.runs):
        for i, (w, data) in enumerate(cases):
            elapsed, cpu, rep, peak = run_window(args.binary, data, strategy, env, w)
            if rep["status"] != "passed" or (w is None and rep["data"]["events"] != n):
                sys.exit("data_convert: %s: %s, %d events" % (data, rep["status"], rep["data"]["events"]))
            results[i].append((elapsed, cpu, peak, rep["data"]["events"]))
    print("%-34s %-45s %10s %8s %7s %9s" % ("run on", "window", "events", "wall s", "cpu s", "peak MiB"))
    for i, (w, data) in enumerate(cases):
        r = results[i]
        print("%-34s %-45s %10d %8.2f %7.2f %9.1f" % (
            os.path.basename(data), "%s..%s" % w if w else "-", r[0][3], statistics.median(x[0] for x in r),
            statistics.median(x[1] for x in r), max(x[2] for x in r) / 1024))
    return 0


def run_window(binary, data, strategy, env, window):
    """data_replay.run, with --from and --to when window is given: through a
    wrapper that execs stratbench, so that the process measured is still
    stratbench."""
    if window is None:
        return run(binary, data, strategy, env)
    wrapper = os.path.join(os.path.dirname(strategy), "stratbench-window.sh")
    with open(wrapper, "w") as f:
        f.write('#!/bin/sh\nexec "%s" "$@" --from "%s" --to "%s"\n' % (binary, window[0], window[1]))
    os.chmod(wrapper, 0o755)
    return run(wrapper, data, strategy, env)


if __name__ == "__main__":
    sys.exit(main())
