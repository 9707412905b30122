"""Passes: trades a little (so that stratbench's records have rows), then
in on_finish writes artifacts named as stratbench's records were:
equity.csv, trades.csv and orders.csv, each with a content of its own.
stratbench must keep all three as the strategy wrote them, list them as
artifacts, and keep its own records apart (records/)."""

MANIFEST = {"params": {}}

MINE = {
    "equity.csv": "mine,equity\n1,the strategy's equity\n",
    "trades.csv": "mine,trades\n1,the strategy's trades\n",
    "orders.csv": "mine,orders\n1,the strategy's orders\n",
}


def on_data(ctx, history):
    held = ctx.position(ctx.symbol)
    if held == 0:
        ctx.buy(ctx.symbol, 1)
    else:
        ctx.sell(ctx.symbol, held)


def on_finish(ctx):
    for name, text in MINE.items():
        with open(ctx.artifact_path(name), "w") as f:
            f.write(text)
