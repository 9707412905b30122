"""breakpoint() in on_data at bar 100, then lines a step goes through; an
order every 50 bars, so that the orders say whether a stop changed the run
(engine/debug_test.go, the workbench's end-to-end test)."""
MANIFEST = {"history": 500}


def on_data(ctx, history):
    if len(history) == 100:
        breakpoint()
    step = len(history) % 50
    if step == 0:
        ctx.buy(ctx.symbol, 1)


def on_finish(ctx):
    print("on_finish ran")
