"""Fails with a timeout in on_execution: every rejection places 25,000 more
orders the market rejects at once, so the executions waiting for
on_execution grow without end and the replay never reaches the next bar.
stratbench stops it before they take its memory.

The symbol is as long as a symbol may be (256 characters; 25,000 such
orders are about 7 MiB of commands, within one message's worth a call) so
that each waiting execution weighs about 0.6 KiB and the 64 MiB guard is
reached after some 100,000 executions, in a few calls: with a short symbol it took
some 600,000, which on a loaded machine took longer than the on_execution
limit, so the stall rule fired first."""

SYMBOL = "NOPE" * 64


def on_data(ctx, history):
    ctx.buy(SYMBOL, 1)


def on_execution(ctx, execution):
    buy = ctx.buy
    for _ in range(25_000):
        buy(SYMBOL, 1)
