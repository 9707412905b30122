# attack: with two symbols, the bridge goes on past a market order and past the bar of its fill without delivering it (its Worker's planned delivery patched to do nothing), as if the market had not filled it
# sandbox: both
# args: --data testdata/attacks/helpers/two_symbols.csv
# expect: exit=1 status=failed failure.kind=protocol
# message: went on past order 1 without its fill
import gc
import time

stage = 0


def on_data(ctx, history):
    # The patch and the order go in two calls: gc.get_objects() can take
    # longer than a batch's time budget on a loaded machine, and the
    # bridge then yields after the call instead of delivering the fill
    # itself, which would leave nothing to attack.
    global stage
    if stage == 0:
        stage = 1
        for o in gc.get_objects():
            if type(o).__name__ == "Worker" and hasattr(o, "_deliver"):
                o._deliver = lambda order_call, fill, call, durations, budget_end: (call, True)
        return
    if stage == 1 and ctx.symbol == "ONE":
        stage = 2
        print("ATTACK %.6f" % time.time())
        ctx.buy(ctx.symbol, 1)
