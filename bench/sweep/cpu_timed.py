"""bench/sweep/cpu.py timing itself, for bench/sweep_bench.py scaling
--inside: the same on_data (cpu.py's own, imported from this folder), and
the time from the first on_data to on_finish on the clocks of the process
that runs it (CPU and wall), printed as one line."""

import time

from cpu import on_data as _cpu_on_data

# cpu.py's params (a sweep reads a MANIFEST as a literal, without running
# the strategy).
MANIFEST = {"name": "sweep-bench-cpu-timed", "params": {"k": 1, "adds": 1500}}
_start = []


def on_data(ctx, history):
    if not _start:
        _start.extend((time.process_time(), time.perf_counter()))
    _cpu_on_data(ctx, history)


def on_finish(ctx):
    cpu, wall = _start
    print("TIMED cpu_ms=%.1f wall_ms=%.1f" % ((time.process_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000))
