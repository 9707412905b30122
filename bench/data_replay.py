#!/usr/bin/env python3
"""Load-and-replay throughput and stratbench's peak RSS, CSV and Parquet, before and after.

    python3 bench/data_replay.py AFTER [--before BEFORE] [--bars 1000000,10000000]
                                 [--runs 3] [--keep DIR] [--python PY]

For each bar count it generates deterministic 1-minute bars of two symbols
as CSV (bench/gen_bars.py) and converts them to one Parquet file with
pyarrow (snappy, dictionaries, row groups of 1Mi rows: bench/data.py's
conversion; the interpreter of .venv-test or --python). It then runs a
no-op strategy (on_data returns at once: what is measured is stratbench
reading, checking, merging and sending the bars, and the bridge's loop)
with `--ci --output json --data FILE`:

  - BEFORE (a binary of an earlier commit, built with `go build -o PATH .`)
    on the CSV, when given: the in-memory path, the whole file parsed
    into memory before the replay;
  - AFTER on the CSV and on the Parquet file.

Runs are interleaved (before, after CSV, after Parquet, before, ...) so
that the machine's load falls on all alike. It prints, per file and
binary, the median wall time, bars per second, the median CPU time of
stratbench and its worker (less sensitive than wall time to other work on
the machine), and the peak RSS of the stratbench process itself (VmHWM,
polled every 5 ms; the worker is not counted), and checks that every run
replayed every bar.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from data import CONVERT  # noqa: E402  (bench/data.py: the pyarrow conversion)

NOOP = '''"""A strategy that does nothing: the cost of the data path and the replay."""


def on_data(ctx, history):
    pass
'''


def vm_hwm_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run(binary, data, strategy, env):
    """Runs one --ci job; returns (wall seconds, CPU seconds of stratbench and its worker, report, peak
    VmHWM in KiB of stratbench)."""
    peak = [0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen([binary, "--ci", "--output", "json", "--data", data, strategy],
                            stdout=subprocess.PIPE, env=env)
    done = threading.Event()

    def poll():
        while not done.wait(0.005):
            peak[0] = max(peak[0], vm_hwm_kib(proc.pid))

    watcher = threading.Thread(target=poll)
    watcher.start()
    out, _ = proc.communicate()
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    done.set()
    watcher.join()
    if proc.returncode != 0:
        sys.exit("data_replay: %s on %s exited with %d" % (binary, data, proc.returncode))
    # CPU of stratbench and its worker (reaped children count): less
    # sensitive than wall time to other work on the machine.
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, json.loads(out), peak[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("after")
    ap.add_argument("--before")
    ap.add_argument("--bars", default="1000000,10000000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", help="folder for the data (reused between invocations)")
    ap.add_argument("--python", help="an interpreter with pyarrow (default: .venv-test/bin/python)")
    args = ap.parse_args()
    py = args.python or os.path.join(ROOT, ".venv-test", "bin", "python")
    work = args.keep or tempfile.mkdtemp(prefix="stratbench-data-replay-")
    os.makedirs(work, exist_ok=True)
    strategy = os.path.join(work, "noop.py")
    with open(strategy, "w") as f:
        f.write(NOOP)
    env = dict(os.environ, STRATBENCH_HOME=os.path.join(work, "home"))

    rows = []
    for n in [int(x) for x in args.bars.split(",")]:
        csv = os.path.join(work, "bars-%d-2.csv" % n)
        pq = csv[:-4] + ".parquet"
        if not os.path.exists(csv):
            print("generating %d bars → %s" % (n, csv), file=sys.stderr)
            subprocess.run([sys.executable, os.path.join(HERE, "gen_bars.py"), str(n), csv, "--symbols", "2"], check=True)
        if not os.path.exists(pq):
            subprocess.run([py, "-c", CONVERT, csv, pq], check=True)
        cases = []
        if args.before:
            cases.append(("before", args.before, csv))
        cases += [("after", args.after, csv), ("after", args.after, pq)]
        results = {i: [] for i in range(len(cases))}
        for _ in range(args.runs):
            for i, (_, binary, data) in enumerate(cases):
                elapsed, cpu, rep, peak = run(binary, data, strategy, env)
                if rep["data"]["events"] != n or rep["status"] != "passed":
                    sys.exit("data_replay: %s on %s: %s, %d events" % (binary, data, rep["status"], rep["data"]["events"]))
                results[i].append((elapsed, cpu, peak))
        for i, (name, _, data) in enumerate(cases):
            wall = statistics.median(r[0] for r in results[i])
            cpu = statistics.median(r[1] for r in results[i])
            peak = max(r[2] for r in results[i]) / 1024
            rows.append((os.path.basename(data), n, name, wall, n / wall, cpu, peak))
    print("%-26s %10s %-7s %8s %11s %7s %9s" % ("file", "bars", "binary", "wall s", "bars/s", "cpu s", "peak MiB"))
    for r in rows:
        print("%-26s %10d %-7s %8.2f %11.0f %7.2f %9.1f" % r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
