# attack: with two symbols, the bridge goes on past a market order and past the bar of its fill without delivering it (its Worker's planned delivery patched to do nothing), as if the market had not filled it; the strategy buys ONE again whenever the market filled its last order, until the bridge goes on past one
# sandbox: both
# args: --data testdata/attacks/helpers/two_symbols.csv
# expect: exit=1 status=failed failure.kind=protocol
# message: without its fill
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
    if stage >= 1 and ctx.symbol == "ONE" and not ctx._open:
        # A buy whenever no order is open: the bridge yields instead of
        # going on past the order when the call ends past the batch's
        # budget or the batch holds no next bar of ONE (a stall on a
        # loaded machine), and the market then fills it, which leaves
        # nothing to attack; the next bar of ONE tries again. An order
        # the bridge went on past stays open (its fill never delivered):
        # no more orders then, the host's check is what ends the run.
        if stage == 1:
            stage = 2
            print("ATTACK %.6f" % time.time())
        ctx.buy(ctx.symbol, 1)
