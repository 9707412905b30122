#!/usr/bin/env python3
"""Sweeps: scaling over --jobs, per-run overhead, memory over 1,000 runs,
and backtrader's optstrategy side by side.

    python3 bench/sweep_bench.py [scaling] [overhead] [memory] [backtrader] [templates] [host]
        [shortruns] [--binary PATH] [--python PY] [--numpy-python PY] [--backtrader-python PY] [--runs R]
        [--slots N] [--other-binary PATH]

With no experiment named, the first four run. Each builds on a fresh
STRATBENCH_HOME in a temporary folder, and prints the machine's load
average beside its numbers (benchmarks on a busy machine say little).

  scaling     a CPU-bound pure-Python strategy (bench/sweep/cpu.py: about
              1,500 additions per bar) over 2,000 bars (--scaling-bars), 6
              combinations, with --jobs 1 and --jobs 2 (--python: the
              interpreter, by default the one running this script): the wall times and
              their ratio; beside them the same work as plain Python processes (the hook called
              2,000 times, no stratbench), one and two at a time: the
              speed-up the machine itself gives that work. Each round runs
              all four; the rounds' own ratios (median, middle 80 %) show
              how far one round's number moves on the machine. With --inside,
              the strategy times itself (bench/sweep/cpu_timed.py, first
              on_data to on_finish) in both, which separates a run's own
              time from what a sweep adds around it.
  overhead    a numpy strategy (bench/sweep/numpy_sma.py) over 500 bars, 12
              combinations: one sweep with --jobs 1 against the same 12 runs
              as --ci one after another; the per-run overhead is the wall
              time per run less the time spent in the strategy's hooks (the
              reports' hooks.*.total_ms). PY must have numpy. With
              --cold-binary, the same sweep by a stratbench that starts every
              run cold, for comparison.
  memory      a 1,000-run sweep of a strategy that does nothing
              (bench/sweep/noop.py, 60 bars) with --jobs 2; stratbench's own
              RSS (VmRSS of the stratbench process, not the workers) sampled
              every 50 ms, reported after 100, 500 and 1,000 runs.
  backtrader  the same 12-combination SMA grid (fast 5/10/15 × slow
              20/30/40/50, all-in market orders) over 20,000 bars with
              backtrader's cerebro.optstrategy at maxcpus 1 and 2
              (bench/sweep/bt_sma.py; PY must have backtrader: install it in
              a throwaway venv, it is not vendored) and with stratbench sweep
              --jobs 1 and 2 (backtest/testdata/sma_cross.py).
  templates   many slots on few cores: the numpy strategy of overhead, 32
              combinations over 2,000 bars, with --jobs N (--slots, default
              8): the wall time, how many warm templates the sweep keeps at
              once and their resident memory (VmRSS summed over the
              processes whose command line has --template, one PID
              namespace below stratbench: the runs forked from them lie one
              further down, and a fork's intermediate process, a child of a
              template, is left out), sampled every 20 ms. PY must have
              numpy.
  host        what stratbench itself costs in CPU beside its workers: the
              scaling strategy, 30 combinations, --jobs 2; the CPU time
              (user + system, all threads) of the stratbench process alone,
              read from /proc when it has exited and before it is reaped
              (the workers, the runs' inits and the templates are other
              processes and are not in it), per sweep and per run. With
              --other-binary, the same for another build, interleaved.
  shortruns   what starting runs costs when runs are short: 60 combinations
              of the strategy that does nothing (bench/sweep/noop.py) over
              500 bars, --jobs 2: the sweep's wall time, and the runs per
              second. With --other-binary, the same for another build,
              interleaved.
"""

import argparse
import glob
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
SWEEP = os.path.join(HERE, "sweep")


def load():
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def gen_bars(n, path):
    subprocess.run([sys.executable, os.path.join(HERE, "gen_bars.py"), str(n), path], check=True)


def bars_file(tmp, n):
    """A CSV of n generated bars in tmp, made on the first call for n."""
    path = os.path.join(tmp, "bars%d.csv" % n)
    if not os.path.exists(path):
        gen_bars(n, path)
    return path


def builds(args, sb):
    """The builds an experiment measures interleaved: sb, and --other-binary
    (once, when it names sb)."""
    return list(dict.fromkeys([sb] + ([args.other_binary] if args.other_binary else [])))


def build(dst):
    subprocess.run(["go", "build", "-o", dst, "."], cwd=ROOT, check=True)
    return dst


class Home:
    """A fresh STRATBENCH_HOME per command."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.n = 0

    def env(self):
        self.n += 1
        home = os.path.join(self.tmp, "home%d" % self.n)
        os.makedirs(home)
        env = dict(os.environ, STRATBENCH_HOME=home)
        env.pop("STRATBENCH_PYTHON_SANDBOX", None)
        return env, home


def timed(cmd, env):
    start = time.perf_counter()
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        sys.exit("%s: exit %d\n%s" % (" ".join(cmd), out.returncode, out.stderr))
    return wall, out.stdout


def hook_ms(report):
    return sum(h.get("total_ms", 0) for h in report["hooks"].values())


def job_reports(home):
    jobs = os.path.join(home, "jobs")
    reports = []
    for name in sorted(os.listdir(jobs)):
        with open(os.path.join(jobs, name, "job.json")) as f:
            reports.append(json.load(f))
    return reports


# The same work as a scaling sweep's run, without stratbench: cpu.py's
# on_data called once per bar in a plain interpreter (-S: no site, the
# cheapest start there is), the strategy's folder on sys.path as a worker
# has it.
PLAIN_RUN = """import importlib.util, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[1])))
spec = importlib.util.spec_from_file_location("strategy", sys.argv[1])
strategy = importlib.util.module_from_spec(spec)
spec.loader.exec_module(strategy)
class Ctx:
    params = dict(strategy.MANIFEST["params"], k=int(sys.argv[2]))
for _ in range(int(sys.argv[3])):
    strategy.on_data(Ctx, None)
"""


def plain_runs(python, strategy, bars, combos, jobs, timed=None):
    """Runs the combinations as plain processes, at most jobs at a time. With
    timed (a list), each process's own timing line (cpu_timed.py's on_finish,
    called after the bars) is appended to it."""
    code = PLAIN_RUN + ("strategy.on_finish(Ctx)\n" if timed is not None else "")
    out = subprocess.PIPE if timed is not None else None
    start = time.perf_counter()
    pending = list(combos)
    running = []
    while pending or running:
        while pending and len(running) < jobs:
            k = pending.pop(0)
            running.append(subprocess.Popen([python, "-S", "-c", code, strategy, str(k), str(bars)],
                                            stdout=out, text=True))
        stdout, _ = running.pop(0).communicate()
        if timed is not None:
            timed.extend(parse_timed(stdout.splitlines()))
    return time.perf_counter() - start


def parse_timed(lines):
    """(cpu_ms, wall_ms) of each TIMED line of cpu_timed.py."""
    out = []
    for line in lines:
        if line.startswith("TIMED "):
            fields = dict(f.split("=") for f in line.split()[1:])
            out.append((float(fields["cpu_ms"]), float(fields["wall_ms"])))
    return out


def sweep_timed(home):
    """The TIMED lines of a sweep's runs, from their job logs."""
    lines = []
    for log in sorted(glob.glob(os.path.join(home, "jobs", "*", "logs.jsonl"))):
        with open(log) as f:
            lines += [json.loads(line)["line"] for line in f]
    return parse_timed(lines)


def decile(xs, k):
    """The k-th decile (1-9) of the sorted list xs, by the nearest rank."""
    return xs[min(len(xs), max(1, -(-k * len(xs) // 10))) - 1]


def scaling(args, sb, homes, tmp):
    bars = args.scaling_bars
    data = bars_file(tmp, bars)
    strategy = os.path.join(SWEEP, "cpu_timed.py" if args.inside else "cpu.py")
    walls = {1: [], 2: []}
    plain = {1: [], 2: []}
    inside = {("stratbench", 1): [], ("stratbench", 2): [], ("plain", 1): [], ("plain", 2): []}
    # Interleaved, so that the VM's own variations hit all four alike.
    for _ in range(args.runs):
        for jobs in (1, 2):
            env, home = homes.env()
            # --python: the interpreter itself, not a launcher in front of
            # it (a pyenv shim costs ~150 ms a start here, paid once per
            # sweep before any run: not what is measured).
            wall, _ = timed([sb, "sweep", strategy, "--ci", "--output", "json", "--data", data, "--grid", "k=1:6:1",
                             "--python", args.python, "--jobs", str(jobs)], env)
            walls[jobs].append(wall)
            if args.inside:
                inside[("stratbench", jobs)] += sweep_timed(home)
            plain[jobs].append(plain_runs(args.python, strategy, bars, range(1, 7), jobs,
                                          inside[("plain", jobs)] if args.inside else None))
    w = {j: statistics.median(v) for j, v in walls.items()}
    p = {j: statistics.median(v) for j, v in plain.items()}
    print("scaling: 6 runs x {:,} bars x ~1,500 additions per bar, {} ({})".format(bars, args.python, load()))
    print("                       stratbench sweep   the same work as plain processes")
    print("  --jobs 1 (1 at once)      %6.2f s          %6.2f s" % (w[1], p[1]))
    print("  --jobs 2 (2 at once)      %6.2f s          %6.2f s" % (w[2], p[2]))
    print("  speed-up                  %6.2fx          %6.2fx   on %d CPUs" % (w[1] / w[2], p[1] / p[2], os.cpu_count()))
    print("  stratbench's speed-up is %.0f %% of what the machine gives plain processes" %
          (100 * (w[1] / w[2]) / (p[1] / p[2])))
    # Each round measures --jobs 1 and 2 a second apart: the spread of
    # these paired ratios shows how far one round's number moves on this
    # machine, which the ratio of the medians above does not.
    sb_pairs = sorted(a / b for a, b in zip(walls[1], walls[2]))
    pl_pairs = sorted(a / b for a, b in zip(plain[1], plain[2]))
    print("  per round (--jobs 1 / --jobs 2 of the same round), median and middle 80 %%: stratbench %.2fx (%.2f-%.2f),"
          " plain %.2fx (%.2f-%.2f); stratbench 1.7x or more in %d of %d rounds" %
          (statistics.median(sb_pairs), decile(sb_pairs, 1), decile(sb_pairs, 9),
           statistics.median(pl_pairs), decile(pl_pairs, 1), decile(pl_pairs, 9),
           sum(r >= 1.7 for r in sb_pairs), len(sb_pairs)))
    if args.inside:
        print("  a run's own time, first on_data to on_finish (medians of %d runs each):" % len(inside[("plain", 1)]))
        for jobs in (1, 2):
            sb_cpu = statistics.median(c for c, _ in inside[("stratbench", jobs)])
            sb_wall = statistics.median(w for _, w in inside[("stratbench", jobs)])
            pl_cpu = statistics.median(c for c, _ in inside[("plain", jobs)])
            pl_wall = statistics.median(w for _, w in inside[("plain", jobs)])
            print("    %d at once: in a stratbench worker %4.0f ms (CPU %4.0f ms); in a plain process %4.0f ms (CPU %4.0f ms)"
                  % (jobs, sb_wall, sb_cpu, pl_wall, pl_cpu))


def overhead(args, sb, homes, tmp):
    if not args.numpy_python:
        print("overhead: skipped (--numpy-python PY with numpy is needed)")
        return
    data = bars_file(tmp, 500)
    strategy = os.path.join(SWEEP, "numpy_sma.py")
    grid = [(f, s) for f in (5, 10, 15) for s in (20, 30, 40, 50)]
    sweeps = [("sweep --jobs 1", sb)]
    if args.cold_binary:
        sweeps.append(("sweep --jobs 1, cold starts", args.cold_binary))
    walls = {name: [] for name, _ in sweeps}
    over = {name: [] for name, _ in sweeps}
    ci_walls, ci_over = [], []
    for _ in range(args.runs):
        # Interleaved, so that a change in the machine's load hits all alike.
        for name, binary in sweeps:
            env, home = homes.env()
            wall, _ = timed([binary, "sweep", strategy, "--ci", "--output", "json", "--data", data, "--python",
                             args.numpy_python, "--grid", "fast=5,10,15", "--grid", "slow=20,30,40,50", "--jobs", "1"], env)
            walls[name].append(wall)
            over[name].append((wall * 1000 - sum(hook_ms(r) for r in job_reports(home))) / len(grid))
        env, home = homes.env()
        start = time.perf_counter()
        for f, s in grid:
            timed([sb, "--ci", "--output", "json", strategy, "--data", data, "--python", args.numpy_python,
                   "--param", "fast=%d" % f, "--param", "slow=%d" % s], env)
        wall = time.perf_counter() - start
        ci_walls.append(wall)
        ci_over.append((wall * 1000 - sum(hook_ms(r) for r in job_reports(home))) / len(grid))
    cw = statistics.median(ci_walls)
    print("overhead: 12 runs of a numpy strategy over 500 bars, one at a time (%s)" % load())
    print("  12 x --ci, one after another   %6.2f s  (%4.0f ms per run besides the hooks)" % (cw, statistics.median(ci_over)))
    for name, _ in sweeps:
        w = statistics.median(walls[name])
        print("  %-30s  %6.2f s  (%4.0f ms per run besides the hooks)  %.2fx faster" % (name, w, statistics.median(over[name]), cw / w))


def rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def templates_now(root):
    """The warm templates among root's descendants: (count, VmRSS KiB)."""

    def children(pid):
        out = []
        try:
            for tid in os.listdir("/proc/%d/task" % pid):
                with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                    out += [int(c) for c in f.read().split()]
        except OSError:
            pass
        return out

    def status(pid):
        try:
            with open("/proc/%d/status" % pid) as f:
                return dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            return {}

    def is_template(pid):
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                return b"\0--template\0" in f.read()
        except OSError:
            return False

    depth = len(status(root).get("NSpid", "").split())
    count, rss, todo = 0, 0, children(root)
    while todo:
        pid = todo.pop()
        todo += children(pid)
        st = status(pid)
        ppid = int(st.get("PPid", "0").strip() or 0)
        if is_template(pid) and not is_template(ppid) and len(st.get("NSpid", "").split()) == depth + 1:
            count += 1
            rss += int(st.get("VmRSS", "0 kB").split()[0])
    return count, rss


def templates(args, sb, homes, tmp):
    if not args.numpy_python:
        sys.exit("templates: pass --numpy-python, an interpreter with numpy")
    data = bars_file(tmp, 2000)
    strategy = os.path.join(SWEEP, "numpy_sma.py")
    walls, counts, rsss = [], [], []
    for _ in range(args.runs):
        env, _ = homes.env()
        cmd = [sb, "sweep", strategy, "--ci", "--output", "json", "--data", data, "--python", args.numpy_python,
               "--grid", "fast=2:9:1", "--grid", "slow=20:23:1", "--jobs", str(args.slots)]
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        most, most_rss = 0, 0
        while proc.poll() is None:
            n, rss = templates_now(proc.pid)
            most, most_rss = max(most, n), max(most_rss, rss)
            time.sleep(0.02)
        walls.append(time.perf_counter() - start)
        if proc.returncode != 0:
            sys.exit("templates: exit %d\n%s" % (proc.returncode, proc.stderr.read()))
        counts.append(most)
        rsss.append(most_rss)
    print("templates: 32 runs of a numpy strategy over 2,000 bars, --jobs %d on %d CPUs (%s)"
          % (args.slots, os.cpu_count(), load()))
    print("  wall %.2f s; templates at once, at most: %d; their resident memory, at most: %.0f MiB"
          % (statistics.median(walls), max(counts), max(rsss) / 1024))


def memory(args, sb, homes, tmp):
    data = bars_file(tmp, 60)
    env, home = homes.env()
    cmd = [sb, "sweep", os.path.join(SWEEP, "noop.py"), "--ci", "--output", "jsonl", "--data", data,
           "--grid", "n=1:1000:1", "--jobs", "2"]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
    samples = []  # (runs done, rss KiB)
    done = [0]

    def sample():
        while proc.poll() is None:
            samples.append((done[0], rss_kib(proc.pid)))
            time.sleep(0.05)

    t = threading.Thread(target=sample)
    t.start()
    for line in proc.stdout:
        if line.startswith('{"index"'):
            done[0] += 1
    proc.wait()
    t.join()
    wall = time.perf_counter() - start
    # Exit 1 is a sweep where some run failed: its runs still ran.
    if proc.returncode not in (0, 1) or done[0] != 1000:
        sys.exit("memory: exit %d after %d runs" % (proc.returncode, done[0]))

    def at(n):
        vals = [r for d, r in samples if d >= n and r > 0]
        return vals[0] if vals else max(r for _, r in samples)

    peak = max(r for _, r in samples)
    print("memory: a 1,000-run sweep, --jobs 2, %.1f s (%.1f runs/s) (%s)" % (wall, 1000 / wall, load()))
    print("  stratbench RSS after  100 runs  %6.1f MiB" % (at(100) / 1024))
    print("  stratbench RSS after  500 runs  %6.1f MiB" % (at(500) / 1024))
    print("  stratbench RSS after 1000 runs  %6.1f MiB" % (at(999) / 1024))
    print("  peak                            %6.1f MiB" % (peak / 1024))
    print("  growth from 100 to 1,000 runs   %6.1f KiB per run" % ((at(999) - at(100)) / 900))


def backtrader(args, sb, homes, tmp):
    if not args.backtrader_python:
        print("backtrader: skipped (--backtrader-python PY with backtrader is needed)")
        return
    data = bars_file(tmp, 20000)
    strategy = os.path.join(ROOT, "backtest", "testdata", "sma_cross.py")
    print("backtrader: 12-combination SMA grid over 20,000 bars (%s)" % load())
    results = {}
    agree = True
    for cpus in (1, 2):
        bt_times, sb_times = [], []
        for _ in range(args.runs):
            out = subprocess.run([args.backtrader_python, os.path.join(SWEEP, "bt_sma.py"), data, str(cpus)],
                                 check=True, stdout=subprocess.PIPE, text=True)
            bt = json.loads(out.stdout)
            bt_times.append(bt["seconds"])
            env, _ = homes.env()
            wall, out = timed([sb, "sweep", strategy, "--ci", "--output", "json", "--data", data,
                               "--grid", "fast=5,10,15", "--grid", "slow=20,30,40,50", "--jobs", str(cpus)], env)
            sb_times.append(wall)
            ours = {(r["params"]["fast"], r["params"]["slow"]): r["metrics"]["final_equity"] for r in json.loads(out)["runs"]}
            for fast, slow, final in bt["finals"]:
                if abs(ours[(fast, slow)] - final) > 1e-6 * abs(final):
                    agree = False
                    print("  fast=%d slow=%d: backtrader %.4f, stratbench %.4f" % (fast, slow, final, ours[(fast, slow)]))
        results[cpus] = (statistics.median(bt_times), statistics.median(sb_times))
        b, s = results[cpus]
        print("  %d CPU%s  backtrader optstrategy %.2f s   stratbench sweep %.2f s   backtrader/stratbench %.2fx"
              % (cpus, "" if cpus == 1 else "s", b, s, b / s))
    print("  final equity of the 12 combinations: %s" % ("the same in both" if agree else "DIFFERENT (above)"))


def interleaved_sweeps(name, args, sb, homes, strategy, data, grid):
    """Runs the sweep of strategy over data with grid at --jobs 2, args.runs
    times for each build (builds), interleaved. Returns, per build, the
    wall times and stratbench's own CPU times (ms: user + system, all its
    threads, not its workers', the runs' inits' or the templates', read
    from /proc when it has exited and before it is reaped)."""
    measured = builds(args, sb)
    walls = {b: [] for b in measured}
    cpu = {b: [] for b in measured}
    tick = os.sysconf("SC_CLK_TCK")
    for _ in range(args.runs):
        for binary in measured:  # interleaved
            env, _ = homes.env()
            start = time.perf_counter()
            errs = tempfile.TemporaryFile()  # read after the wait: a pipe could fill and stall it
            p = subprocess.Popen([binary, "sweep", strategy, "--ci", "--output", "json", "--data", data, "--grid",
                                  grid, "--python", args.python, "--jobs", "2"], env=env,
                                 stdout=subprocess.DEVNULL, stderr=errs)
            # Exited, not reaped: its /proc/PID/stat still holds its times.
            os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
            walls[binary].append(time.perf_counter() - start)
            with open("/proc/%d/stat" % p.pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu[binary].append((int(fields[11]) + int(fields[12])) * 1000 / tick)  # utime, stime
            if p.wait() != 0:
                errs.seek(0)
                sys.exit("%s: %s exited %d\n%s" % (name, binary, p.returncode, errs.read().decode()))
            errs.close()
    return walls, cpu


def host(args, sb, homes, tmp):
    runs = 30
    walls, cpu = interleaved_sweeps("host", args, sb, homes, os.path.join(SWEEP, "cpu.py"), bars_file(tmp, 2000),
                                    "k=1:%d:1" % runs)
    print("host: stratbench's own CPU, a %d-run sweep of the scaling strategy, --jobs 2 (%s)" % (runs, load()))
    for binary, times in cpu.items():
        c = statistics.median(times)
        print("  %-40s %5.0f ms (%4.1f ms a run; sweeps: %s ms), wall %.2f s" % (
            binary, c, c / runs, " ".join("%.0f" % x for x in times), statistics.median(walls[binary])))


def shortruns(args, sb, homes, tmp):
    runs = 60
    walls, _ = interleaved_sweeps("shortruns", args, sb, homes, os.path.join(SWEEP, "noop.py"), bars_file(tmp, 500),
                                  "n=1:%d:1" % runs)
    print("shortruns: %d runs of a strategy that does nothing, 500 bars, --jobs 2 (%s)" % (runs, load()))
    for binary, times in walls.items():
        w = statistics.median(times)
        print("  %-40s %5.0f ms (%3.0f runs/s; sweeps: %s ms)" % (
            binary, w * 1000, runs / w, " ".join("%.0f" % (x * 1000) for x in times)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("experiments", nargs="*", choices=["scaling", "overhead", "memory", "backtrader", "templates", "host",
                                                           "shortruns", []])
    ap.add_argument("--binary", help="a built stratbench (default: build one)")
    ap.add_argument("--python", default=sys.executable,
                    help="scaling, host, shortruns: the interpreter of the sweeps and of the plain processes "
                         "(default: the one running this script, itself rather than a launcher such as a pyenv shim)")
    ap.add_argument("--numpy-python", help="an interpreter with numpy, for overhead")
    ap.add_argument("--cold-binary", help="a stratbench whose sweeps start every run cold (built before warm "
                    "workers), for overhead's comparison")
    ap.add_argument("--backtrader-python", help="an interpreter with backtrader, for backtrader")
    ap.add_argument("--inside", action="store_true", help="scaling: run bench/sweep/cpu_timed.py, which times "
                    "itself, and print a run's own time in a worker and in a plain process")
    ap.add_argument("--scaling-bars", type=int, default=2000, help="bars per run for scaling (the issue's "
                    "workload: 2,000)")
    ap.add_argument("--runs", type=int, default=3, help="repetitions; the median is reported")
    ap.add_argument("--slots", type=int, default=8, help="templates: --jobs of the sweep")
    ap.add_argument("--other-binary", help="host, shortruns: another build, measured interleaved with --binary")
    args = ap.parse_args()
    todo = args.experiments or ["scaling", "overhead", "memory", "backtrader"]
    with tempfile.TemporaryDirectory(prefix="sweep-bench-") as tmp:
        sb = args.binary or build(os.path.join(tmp, "stratbench"))
        homes = Home(tmp)
        for name in todo:
            globals()[name](args, sb, homes, tmp)


if __name__ == "__main__":
    main()
