# attack: with two symbols, a resting limit order on TWO that TWO's next bar fills, then a market order on ONE whose fill the bridge would plan past TWO's bar (its note of the open orders patched to say one): the market's batch ends before TWO's bar (an open order may fill there), so the worker holds no bar to go on past and the run passes, both orders filled by the market
# sandbox: both
# args: --data testdata/attacks/helpers/two_symbols.csv
# expect: exit=0 status=passed metrics.fills=2
import time

step = 0


class OneOpen(set):
    def __len__(self):
        return 1


def on_data(ctx, history):
    global step
    step += 1
    if step == 2 and ctx.symbol == "TWO":
        # Far above the market: TWO's next bar fills it at its open.
        ctx.buy("TWO", 1, limit=ctx.bar.close * 2)
    elif step == 3 and ctx.symbol == "ONE":
        ctx._open = OneOpen(ctx._open)
        print("ATTACK %.6f" % time.time())
        ctx.buy("ONE", 1)


def on_execution(ctx, execution):
    pass
