#!/usr/bin/env python3
"""Save → result on screen: the workbench in tmux, timed from a save of the
strategy to its run's report on the screen.

    python3 bench/save_bench.py [--binary PATH] [--python PY] [--saves 10]
        [--strategies example,pandas] [--in-place] [--keep DIR]

For each strategy (example: python/example/strategy.py over the bundled
sample, 20,160 bars; pandas: the same with `import pandas as pd` as its
first import, so that each run has pandas imported), it starts
`stratbench STRATEGY` in a tmux session of its own (its own server, a
160×50 window), waits for the first run's report, then saves the strategy
SAVES times, a comment line changed each time, written beside it and
renamed over it as editors that save atomically do (JetBrains, gedit,
Kate), or with --in-place written into the file itself as vim, VS Code,
nano and Emacs do (which waits the watcher's debounce: docs/workbench.md). Each save is timed from just before the
rename until the screen's status line shows a new job passed (`✓ PASSED
job ID`, an ID not seen before): one tmux control-mode client captures
the screen each time the pane wrote something. The watcher's wait is part
of every number: it is what a user waits (5 ms after an atomic save's
rename, 75 ms after an in-place save's last write).

CPU: with a writable cgroup v1 cpuacct hierarchy (root), the workbench and
everything it starts run in a cgroup of their own, and each save's CPU
(stratbench, the template, the run; not tmux, not this script) is read
from cpuacct.usage: the workbench's CPU from the save until the result
is on screen, then until it is idle again (the job's folder written).
Without one, CPU is not reported.

It prints, per strategy, each save's time and CPU, then the median, min
and max. --python must import pandas for the pandas strategy.
"""

import argparse
import os
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXAMPLE = os.path.join(ROOT, "python", "example", "strategy.py")
STATUS = re.compile(r"✓ PASSED\s+job (\S+)")
CPUACCT = "/sys/fs/cgroup/cpuacct"


class Cgroup:
    """A cpuacct cgroup of its own, or nothing when none can be made."""

    def __init__(self, name):
        self.path = os.path.join(CPUACCT, name)
        try:
            os.makedirs(self.path, exist_ok=True)
            with open(os.path.join(self.path, "cpuacct.usage")):
                pass
        except OSError:
            self.path = None

    def usage(self):
        if self.path is None:
            return None
        with open(os.path.join(self.path, "cpuacct.usage")) as f:
            return int(f.read()) / 1e9

    def wrap(self, cmd):
        """cmd run in the cgroup (a shell that joins it, then execs cmd)."""
        if self.path is None:
            return cmd
        return "echo $$ > %s/cgroup.procs && exec %s" % (self.path, cmd)

    def remove(self):
        if self.path is not None:
            try:
                os.rmdir(self.path)
            except OSError:
                pass


def shell_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


class Screen:
    """One tmux control-mode client on the session. It reads the pane's
    output notifications and captures the screen after each burst of
    them, so the screen is looked at when it changed and never spawns a
    process per look: a `tmux capture-pane` every 2 ms took most of a CPU
    on a 2-CPU machine, CPU the workbench then did not have."""

    def __init__(self, sock, session):
        self.session = session
        self.proc = subprocess.Popen(["tmux", "-L", sock, "-C", "attach", "-t", session],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self.buf = b""

    def _line(self, deadline):
        while b"\n" not in self.buf:
            left = deadline - time.perf_counter()
            if left <= 0:
                return None
            r, _, _ = select.select([self.proc.stdout], [], [], left)
            if not r:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                sys.exit("bench: the tmux control client ended")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def capture(self, deadline=None):
        """The screen's text now."""
        deadline = deadline or time.perf_counter() + 10
        self.proc.stdin.write(b"capture-pane -p -t %s\n" % self.session.encode())
        lines, inside = [], False
        while True:
            line = self._line(deadline)
            if line is None:
                sys.exit("bench: tmux did not answer a capture")
            if line.startswith(b"%begin"):
                inside = True
            elif inside and (line.startswith(b"%end") or line.startswith(b"%error")):
                return b"\n".join(lines).decode("utf-8", "replace")
            elif inside:
                lines.append(line)

    def changed(self, deadline):
        """Waits until the pane wrote something; False at the deadline."""
        while True:
            line = self._line(deadline)
            if line is None:
                return False
            if line.startswith(b"%output"):
                # Drain the rest of the burst without waiting.
                while b"\n" in self.buf:
                    self._line(deadline)
                return True

    def close(self):
        try:
            self.proc.stdin.write(b"detach-client\n")
        except OSError:
            pass
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def passed_id(text):
    m = STATUS.search(text)
    return m.group(1) if m else None


def wait_for(scr, seen, timeout=60.0):
    """Looks at the screen after each change until a job id not in seen has
    passed; returns it and the time it was seen."""
    deadline = time.perf_counter() + timeout
    while True:
        text = scr.capture()
        job = passed_id(text)
        if job is not None and job not in seen:
            return job, time.perf_counter()
        if "FAILED" in text:
            sys.exit("bench: a run failed:\n" + text)
        if not scr.changed(deadline):
            sys.exit("bench: no new passed job on screen after %.0f s:\n%s" % (timeout, scr.capture()))


def idle(cg, quiet=0.15, step=0.05, timeout=10.0):
    """Waits until the cgroup's CPU stops growing (the job's folder written),
    and returns its usage then."""
    last = cg.usage()
    if last is None:
        time.sleep(0.3)
        return None
    deadline = time.perf_counter() + timeout
    still = 0.0
    while time.perf_counter() < deadline and still < quiet:
        time.sleep(step)
        now = cg.usage()
        still = still + step if now - last < 0.002 else 0.0
        last = now
    return last


def bench(name, source, args, work, binary):
    folder = os.path.join(work, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    strategy = os.path.join(folder, "strategy.py")
    with open(strategy, "w") as f:
        f.write(source)
    sock, session = "sbsave-%d" % os.getpid(), name
    cg = Cgroup("stratbench-save-%d-%s" % (os.getpid(), name))
    cmd = cg.wrap("%s --python %s %s" % (shell_quote(binary), shell_quote(args.python), shell_quote(strategy)))
    env = dict(os.environ, STRATBENCH_HOME=os.path.join(work, "home"), TERM="xterm-256color")
    subprocess.run(["tmux", "-L", sock, "new-session", "-d", "-s", session, "-x", "160", "-y", "50", "-c", folder,
                    "sh", "-c", cmd], check=True, env=env)
    times, cpus, totals = [], [], []
    scr = None
    try:
        scr = Screen(sock, session)
        job, _ = wait_for(scr, set(), timeout=120)
        seen = {job}
        idle(cg)
        for i in range(args.saves):
            tmp = strategy + ".tmp"
            content = source + "\n# save %d\n" % i
            if not args.in_place:
                with open(tmp, "w") as f:
                    f.write(content)
            c0 = cg.usage()
            t0 = time.perf_counter()
            if args.in_place:
                with open(strategy, "w") as f:
                    f.write(content)
            else:
                os.rename(tmp, strategy)
            job, t1 = wait_for(scr, seen)
            c1 = cg.usage()
            seen.add(job)
            c2 = idle(cg)
            times.append(t1 - t0)
            if c0 is not None:
                cpus.append(c1 - c0)
                totals.append(c2 - c0)
            print("%s save %d: %.0f ms%s" % (name, i + 1, 1000 * (t1 - t0),
                                               "" if c0 is None else ", cpu %.0f ms to the screen, %.0f ms in all"
                                               % (1000 * (c1 - c0), 1000 * (c2 - c0))), file=sys.stderr)
    finally:
        if scr is not None:
            scr.close()
        subprocess.run(["tmux", "-L", sock, "send-keys", "-t", session, "q"], capture_output=True)
        time.sleep(0.5)
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)
        cg.remove()
    return times, cpus, totals


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", help="a stratbench binary (default: go build of this tree)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--saves", type=int, default=10)
    ap.add_argument("--strategies", default="example,pandas")
    ap.add_argument("--in-place", action="store_true", help="save by writing the file in place, not by a rename")
    ap.add_argument("--keep", help="work folder (default: a new temporary one)")
    args = ap.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="stratbench-save-")
    os.makedirs(work, exist_ok=True)
    binary = args.binary
    if not binary:
        binary = os.path.join(work, "stratbench")
        subprocess.run(["go", "build", "-o", binary, "."], cwd=ROOT, check=True)
    with open(EXAMPLE) as f:
        example = f.read()
    # The pandas strategy: pandas as the first leading import (after the
    # docstring), so that a template preloads it and a cold start imports it.
    doc_end = example.index('"""', 3) + 3
    sources = {"example": example, "pandas": example[:doc_end] + "\n\nimport pandas as pd  # noqa: F401\n" + example[doc_end:]}
    load0 = os.getloadavg()
    results = {}
    for name in args.strategies.split(","):
        results[name] = bench(name, sources[name], args, work, binary)
    load1 = os.getloadavg()
    print("load average %.1f at the start, %.1f at the end" % (load0[0], load1[0]))
    for name, (times, cpus, totals) in results.items():
        ms = [1000 * t for t in times]
        line = "%-8s save → result on screen: median %.0f ms (min %.0f, max %.0f) over %d saves" % (
            name, statistics.median(ms), min(ms), max(ms), len(ms))
        if cpus:
            line += "; CPU median %.0f ms to the screen, %.0f ms in all" % (
                1000 * statistics.median(cpus), 1000 * statistics.median(totals))
        print(line)


if __name__ == "__main__":
    main()
