#!/usr/bin/env python3
"""Throughput of two stratbench binaries side by side, with and without --sandbox.

    python3 bench/compare.py BEFORE AFTER [--bars N] [--runs R] [--keep DIR] [--modes plain,sandbox]

Runs the SMA-crossover strategy of bench/bench.py (backtest/testdata/sma_cross.py)
over N deterministic 1-minute bars through `BEFORE --ci` and `AFTER --ci`,
interleaved (before, after, before, after, ...) so that the machine's load
falls on both alike, in each mode, and prints the median wall time of each,
the bars per second and the ratio. The two must give the same orders hash.
Build the binaries with `go build -o PATH .` from the two commits.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
STRATEGY = os.path.join(ROOT, "backtest", "testdata", "sma_cross.py")


def run(binary, data, sandbox, env):
    cmd = [binary, "--ci", "--output", "json", "--data", data]
    if sandbox:
        cmd.append("--sandbox")
    cmd.append(STRATEGY)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit("compare: %s exited with %d" % (" ".join(cmd), proc.returncode))
    # CPU of stratbench and its worker (reaped children count): less
    # sensitive than wall time to other work on the machine.
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, json.loads(proc.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--bars", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep", help="folder for the data (reused between invocations)")
    ap.add_argument("--modes", default="plain,sandbox")
    args = ap.parse_args()

    work = args.keep or tempfile.mkdtemp(prefix="stratbench-compare-")
    os.makedirs(work, exist_ok=True)
    data = os.path.join(work, "bars-%d.csv" % args.bars)
    if not os.path.exists(data):
        print("generating %d bars → %s" % (args.bars, data), file=sys.stderr)
        subprocess.run([sys.executable, os.path.join(HERE, "gen_bars.py"), str(args.bars), data], check=True)
    env = dict(os.environ, STRATBENCH_HOME=os.path.join(work, "home"))

    print("%-8s %-7s %9s %12s %9s  %s" % ("mode", "binary", "median s", "bars/s", "CPU s", "runs (s)"))
    for mode in args.modes.split(","):
        sandbox = mode == "sandbox"
        times = {"before": [], "after": []}
        cpus = {"before": [], "after": []}
        hashes = {}
        for _ in range(args.runs):
            for name, binary in (("before", args.before), ("after", args.after)):
                t, cpu, rep = run(binary, data, sandbox, env)
                times[name].append(t)
                cpus[name].append(cpu)
                hashes.setdefault(name, rep["orders_hash"])
        for name in ("before", "after"):
            med = statistics.median(times[name])
            print("%-8s %-7s %9.2f %12.0f %9.2f  %s" % (mode, name, med, args.bars / med, statistics.median(cpus[name]),
                                                       " ".join("%.2f" % t for t in times[name])))
        ratio = statistics.median(times["before"]) / statistics.median(times["after"])
        cpu_ratio = statistics.median(cpus["before"]) / statistics.median(cpus["after"])
        print("%-8s ratio   %.2f× wall, %.2f× CPU (before / after); orders hash %s" % (
            mode, ratio, cpu_ratio, "identical" if hashes["before"] == hashes["after"] else "DIFFERENT"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
