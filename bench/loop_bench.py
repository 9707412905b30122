#!/usr/bin/env python3
"""stratbench --ci against the tight in-process loop, on the same bars.

    python3 bench/loop_bench.py [--bars 200000,1000000] [--rounds 5]
        [--keep DIR] [--binary PATH] [--python PY] [--sandbox]

For each size, bench/gen_bars.py writes the bars (one symbol, 1-minute),
then each round runs, interleaved (the order alternates from round to
round, ABBA), the tight loop (bench/tight.py: the CSV parsed in Python, a
deque, sma_cross.py's hook with math.fsum, next-open fills, all-in sizing)
and `stratbench --ci` of backtest/testdata/sma_cross.py. It checks that
both give the same fills and final equity, bit for bit, and prints for
each size the medians of:

  wall   the elapsed time of each (the acceptance ratio: tight / stratbench);
  cpu    the CPU time of the process and every descendant it waited for
         (wait4): for stratbench, its own plus its worker's;
  host / worker
         stratbench's own CPU, read from /proc/PID/stat (utime+stime)
         just before it exits, and the rest of cpu: its worker tree's.

With --sandbox, each round also runs `stratbench --ci --sandbox` and the
ratio of sandboxed to unsandboxed runs is printed too.

On a machine shared with other work the wall times move with the load; CPU
times move much less (they still grow with cache and scheduler pressure).
Read the CPU ratio beside the wall one, and the worker's CPU (the process
on the critical path: the host works beside it on the other core) against
the tight loop's. Exit status 1 when the results differ.
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
TICK = os.sysconf("SC_CLK_TCK")


def proc_times(pid):
    """(own, waited-for children) CPU seconds of pid, or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # Fields 14-17 (utime stime cutime cstime), counted from 1 with the
    # pid first and the state third: index 11.. after the name.
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return (utime + stime) / TICK, (cutime + cstime) / TICK


def timed(cmd, env=None, split=False):
    """Runs cmd: (wall s, cpu s of it and its waited-for descendants, stdout,
    (own, children) CPU s from its last /proc sample when split)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env)
    last = [None]
    done = threading.Event()

    def poll():
        while not done.wait(0.01):
            t = proc_times(proc.pid)
            if t is not None:
                last[0] = t

    watcher = threading.Thread(target=poll) if split else None
    if watcher:
        watcher.start()
    out = proc.stdout.read()
    done.set()
    if watcher:
        watcher.join()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit("bench: %s exited with %d" % (cmd[0], proc.returncode))
    cpu = usage.ru_utime + usage.ru_stime
    # The children's share is what wait4 counted less stratbench's own: a
    # last sample taken before stratbench reaped its tree would say 0.
    own = last[0][0] if last[0] is not None else None
    return wall, cpu, out, None if own is None else (own, max(cpu - own, 0.0))


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bars", default="200000,1000000", help="comma-separated sizes")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--keep", help="folder for the data and the binary (reused between invocations)")
    ap.add_argument("--binary", help="a stratbench binary (default: go build of this tree)")
    ap.add_argument("--python", default=sys.executable, help="the interpreter of both (default: this one)")
    ap.add_argument("--sandbox", action="store_true", help="also run stratbench --ci --sandbox")
    args = ap.parse_args()
    sizes = [int(s) for s in args.bars.split(",")]

    work = args.keep or tempfile.mkdtemp(prefix="stratbench-loop-")
    os.makedirs(work, exist_ok=True)
    data = {}
    for n in sizes:
        data[n] = os.path.join(work, "bars-%d.csv" % n)
        if not os.path.exists(data[n]):
            print("generating %d bars → %s" % (n, data[n]), file=sys.stderr)
            subprocess.run([sys.executable, os.path.join(HERE, "gen_bars.py"), str(n), data[n]], check=True)
    binary = args.binary
    if not binary:
        binary = os.path.join(work, "stratbench")
        subprocess.run(["go", "build", "-o", binary, "."], cwd=ROOT, check=True)
    env = dict(os.environ, STRATBENCH_HOME=os.path.join(work, "home"), STRATBENCH_PYTHON=args.python)
    load0 = os.getloadavg()

    whos = ["tight", "sb"] + (["sandbox"] if args.sandbox else [])
    res = {n: {who: [] for who in whos} for n in sizes}
    same = True
    for r in range(args.rounds):
        for n in sizes:
            order = whos if r % 2 == 0 else whos[::-1]
            for who in order:
                if who == "tight":
                    wall, cpu, out, _ = timed([args.python, os.path.join(HERE, "tight.py"), data[n], "--json"])
                    t = json.loads(out)
                    res[n]["tight"].append({"wall": wall, "cpu": cpu, "fills": t["fills"], "equity": t["final_equity"]})
                else:
                    extra = ["--sandbox"] if who == "sandbox" else []
                    wall, cpu, out, split = timed([binary, "--ci", "--output", "json", "--data", data[n]] + extra + [STRATEGY],
                                                  env=env, split=True)
                    rep = json.loads(out)
                    m = rep["metrics"]
                    res[n][who].append({"wall": wall, "cpu": cpu, "fills": m["fills"], "equity": m["final_equity"],
                                         "host": split[0] if split else float("nan"),
                                         "worker": split[1] if split else float("nan"),
                                         "on_data": rep["hooks"]["on_data"]["total_ms"] / 1000})
            a, b = res[n]["tight"][-1], res[n]["sb"][-1]
            print("round %d, %d bars: tight %.2f s (cpu %.2f), stratbench %.2f s (cpu %.2f: host %.2f, worker %.2f)"
                  % (r + 1, n, a["wall"], a["cpu"], b["wall"], b["cpu"], b["host"], b["worker"]), file=sys.stderr)
            if (a["fills"], a["equity"]) != (b["fills"], b["equity"]):
                same = False
            if args.sandbox:
                c = res[n]["sandbox"][-1]
                print("          sandboxed %.2f s (cpu %.2f: host %.2f, worker %.2f)" % (c["wall"], c["cpu"], c["host"], c["worker"]),
                      file=sys.stderr)
                if (c["fills"], c["equity"]) != (a["fills"], a["equity"]):
                    same = False
    load1 = os.getloadavg()

    print("load average %.1f at the start, %.1f at the end; %d rounds, medians" % (load0[0], load1[0], args.rounds))
    for n in sizes:
        t, s = res[n]["tight"], res[n]["sb"]
        tw, sw = median([x["wall"] for x in t]), median([x["wall"] for x in s])
        tc, sc = median([x["cpu"] for x in t]), median([x["cpu"] for x in s])
        host, worker = median([x["host"] for x in s]), median([x["worker"] for x in s])
        ident = all((x["fills"], x["equity"]) == (t[0]["fills"], t[0]["equity"]) for x in t + s)
        print("%d bars" % n)
        print("  fills, final equity   %d, %r: %s" % (t[0]["fills"], t[0]["equity"], "identical" if ident else "DIFFERENT"))
        print("  tight loop            wall %.3f s   cpu %.3f s" % (tw, tc))
        print("  stratbench --ci       wall %.3f s   cpu %.3f s (host %.3f, worker %.3f; on_data %.3f)"
              % (sw, sc, host, worker, median([x["on_data"] for x in s])))
        print("  ratio (tight/stratbench)  wall %.2f×   cpu %.2f×   tight cpu / worker cpu %.2f×"
              % (tw / sw, tc / sc, tc / worker))
        if args.sandbox:
            x = res[n]["sandbox"]
            xw, xc = median([v["wall"] for v in x]), median([v["cpu"] for v in x])
            print("  stratbench --ci --sandbox  wall %.3f s   cpu %.3f s (host %.3f, worker %.3f): %.2f× the unsandboxed wall, %.2f× its cpu"
                  % (xw, xc, median([v["host"] for v in x]), median([v["worker"] for v in x]), xw / sw, xc / sc))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
