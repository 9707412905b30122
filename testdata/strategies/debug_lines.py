"""No breakpoint() of its own: the workbench sets one on the line of step,
with a condition (engine/debug_test.go)."""
MANIFEST = {"history": 500}


def on_data(ctx, history):
    step = len(history) % 50
    if step == 0:
        ctx.buy(ctx.symbol, 1)
