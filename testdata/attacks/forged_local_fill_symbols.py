# attack: with two symbols, make the bridge deliver its own market fills at half the price (its Worker's local market patched), then buy: the fill is due after the other symbol's bar
# sandbox: both
# args: --data testdata/attacks/helpers/two_symbols.csv
# expect: exit=1 status=failed failure.kind=protocol failure.hook=on_data
# message: the worker filled order 1 itself at price
import gc
import time

done = False


def on_data(ctx, history):
    global done
    if done or ctx.symbol != "ONE":
        return
    done = True
    for o in gc.get_objects():
        if type(o).__name__ == "Worker" and getattr(o, "local", None) is not None:
            buy, sell, fee_bps, allow_short = o.local
            o.local = (buy * 0.5, sell, fee_bps, allow_short)
    print("ATTACK %.6f" % time.time())
    ctx.buy(ctx.symbol, 1)
