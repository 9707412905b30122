# attack: claim a huge commands_discarded through the shared page, then fail the hook
# sandbox: both
# expect: exit=1 status=failed failure.kind=exception failure.hook=on_data commands_discarded=2
import mmap
import time


def on_data(ctx, history):
    page = memoryview(mmap.mmap(5, 4096)).cast("Q")
    print("ATTACK %.6f" % time.time())
    ctx.buy(ctx.symbol, 1)
    ctx.sell(ctx.symbol, 1)
    page[2] = 10**15
    raise RuntimeError("fail with two commands issued")
