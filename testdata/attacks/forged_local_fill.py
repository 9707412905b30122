# attack: make the bridge deliver its own market fills at half the price (its Worker's local market patched), then buy on every bar until one fill is the bridge's
# sandbox: both
# args: --data testdata/attacks/helpers/one_symbol.csv
# expect: exit=1 status=failed failure.kind=protocol failure.hook=on_data
# message: itself at price
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
            if type(o).__name__ == "Worker" and getattr(o, "local", None) is not None:
                buy, sell, fee_bps, allow_short = o.local
                o.local = (buy * 0.5, sell, fee_bps, allow_short)
        return
    if stage >= 1:
        # One buy a bar: the bridge yields instead of delivering a fill
        # itself when the call ends past the batch's budget or on the
        # batch's last bar (a stall on a loaded machine), and the
        # market's honest fill then leaves nothing to attack; the next
        # bar tries again.
        if stage == 1:
            stage = 2
            print("ATTACK %.6f" % time.time())
        ctx.buy(ctx.symbol, 1)
