# attack: with two symbols, after a market order on ONE whose fill the bridge plans past TWO's bar, TWO's on_data runs 30 s while claiming through the shared page (fd 5) that the fill's on_execution is running: the timeout is still the run's, within its limit
# sandbox: both
# args: --data testdata/attacks/helpers/two_symbols.csv
# expect: exit=1 status=failed failure.kind=timeout
# within: 6.5
import mmap
import time

step = 0


def on_data(ctx, history):
    global step
    step += 1
    if step == 3 and ctx.symbol == "ONE":
        ctx.buy("ONE", 1)
    elif step == 4 and ctx.symbol == "TWO":
        page = memoryview(mmap.mmap(5, 4096)).cast("Q")
        print("ATTACK %.6f" % time.time())
        end = time.time() + 30
        while time.time() < end:
            page[2] = 3  # the first fill's on_execution runs
        print("the forged word bought 30 s")


def on_execution(ctx, execution):
    pass
