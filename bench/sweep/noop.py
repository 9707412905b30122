"""A strategy that does nothing, for bench/sweep_bench.py memory: a
1,000-run sweep measures stratbench, not the strategy."""

MANIFEST = {"name": "sweep-bench-noop", "params": {"n": 0}}


def on_data(ctx, history):
    pass
