"""CPU-bound pure-Python strategy for bench/sweep_bench.py scaling: about
1,500 additions per bar, no orders. k only changes the numbers added."""

MANIFEST = {"name": "sweep-bench-cpu", "params": {"k": 1, "adds": 1500}}


def on_data(ctx, history):
    total = 0
    k = ctx.params["k"]
    for i in range(ctx.params["adds"]):
        total += i * k
    if total < 0:
        print(total)
