# attack: after fills the bridge delivered itself, one on_data call runs 30 s while claiming through the shared page (fd 5) that a fill's on_execution is running and the clock is far ahead
# sandbox: both
# args: --data testdata/attacks/helpers/one_symbol.csv
# expect: exit=1 status=failed failure.kind=timeout
# within: 6.5
import mmap
import time

bars = 0


def on_data(ctx, history):
    global bars
    bars += 1
    if bars < 10:
        # A buy, then a sell: fills the bridge delivers itself.
        if ctx.position(ctx.symbol):
            ctx.sell(ctx.symbol, 1)
        else:
            ctx.buy(ctx.symbol, 1)
        return
    page = memoryview(mmap.mmap(5, 4096)).cast("Q")
    print("ATTACK %.6f" % time.time())
    end = time.time() + 30
    while time.time() < end:
        page[0] = (1 << 64) - 1
        page[2] = (1 << 64) - 1
    print("the forged words bought 30 s")


def on_execution(ctx, execution):
    pass
