# attack: with two symbols, the bridge goes on past a market order and past the bar of its fill without delivering it (its Worker's planned delivery patched to do nothing), as if the market had not filled it
# sandbox: both
# args: --data testdata/attacks/helpers/two_symbols.csv
# expect: exit=1 status=failed failure.kind=protocol
# message: went on past order 1 without its fill
import gc
import time

done = False


def on_data(ctx, history):
    global done
    if done or ctx.symbol != "ONE":
        return
    done = True
    for o in gc.get_objects():
        if type(o).__name__ == "Worker" and hasattr(o, "_deliver_planned"):
            o._deliver_planned = lambda due, call, durations, budget_end: (call, True)
    print("ATTACK %.6f" % time.time())
    ctx.buy(ctx.symbol, 1)
