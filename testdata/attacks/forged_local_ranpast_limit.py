# attack: with two symbols, a limit order on ONE far below the market that the bridge takes for a market order (its note of the call's one market order forged) and goes on past; TWO's bar then orders, so the limit goes to the host unfilled, before the yield's last call
# sandbox: both
# args: --data testdata/attacks/helpers/two_symbols.csv
# expect: exit=1 status=failed failure.kind=protocol
# message: only a market order goes on
import time

step = 0


def on_data(ctx, history):
    global step
    step += 1
    if step == 3 and ctx.symbol == "ONE":
        print("ATTACK %.6f" % time.time())
        oid = ctx.buy("ONE", 1, limit=0.01)
        # The bridge's note of the call's one market order (op 0 is a buy).
        ctx._market = (0, "ONE", 1.0, oid)
    elif step == 4 and ctx.symbol == "TWO":
        ctx.buy("TWO", 1)
