"""bench/sweep/cpu.py that also times itself, for bench/sweep_bench.py
scaling --inside: from the first on_data to on_finish, on the clocks of
the process that runs it (CPU and wall), printed as one line."""

import time

MANIFEST = {"name": "sweep-bench-cpu-timed", "params": {"k": 1, "adds": 1500}}
_start = []


def on_data(ctx, history):
    if not _start:
        _start.extend((time.process_time(), time.perf_counter()))
    total = 0
    k = ctx.params["k"]
    for i in range(ctx.params["adds"]):
        total += i * k
    if total < 0:
        print(total)


def on_finish(ctx):
    cpu, wall = _start
    print("TIMED cpu_ms=%.1f wall_ms=%.1f" % ((time.process_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000))
