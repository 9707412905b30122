"""Passes: places orders the market must reject (unknown symbol, zero qty,
more than the cash) and cancels an order that does not exist; on_execution
sees every rejection with its reason."""
seen = []


def on_data(ctx, history):
    if len(seen) == 0 and len(history) == 2:
        seen.append("placed")
        ctx.buy("NOPE", 1)
        ctx.buy(ctx.symbol, 0)
        ctx.buy(ctx.symbol, 10**9)
        ctx.cancel(999)


def on_execution(ctx, execution):
    seen.append([execution.order_id, execution.symbol, execution.status, execution.reason, ctx.position(execution.symbol)])


def on_finish(ctx):
    return {"seen": seen}
