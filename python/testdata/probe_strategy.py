"""Exercises the strategy API over two symbols; on_finish returns what it saw."""
import datetime

MANIFEST = {"name": "probe", "params": {"n": 3, "ratio": 0.5, "flag": True, "tag": "x"}, "history": 4}

seen = []
executions = []


def on_data(ctx, history):
    assert ctx.time.tzinfo is datetime.timezone.utc
    assert history[-1].close == ctx.bar.close == history.close[-1]
    assert len(history.close) == len(history) <= 4
    seen.append([ctx.symbol, ctx.time.isoformat(), len(history), list(history.close), history[0].open,
                 ctx.cash, ctx.position(ctx.symbol)])
    if len(seen) == 3:
        ctx.buy(ctx.symbol, 2)
        ctx.sell("B", 1.5, limit=10.25)
    if len(seen) == 5:
        ctx.cancel(7)


def on_execution(ctx, execution):
    executions.append([execution.order_id, execution.status, execution.reason, ctx.cash,
                       ctx.position(execution.symbol), execution.time.isoformat()])


def on_finish(ctx):
    return {"seen": seen, "executions": executions, "params": ctx.params, "equity": ctx.equity,
            "artifact": ctx.artifact_path("x.csv")}
