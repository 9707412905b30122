# attack: place a limit order far below the market, then have the bridge take it for a market order and deliver its fill itself
# sandbox: both
# args: --data testdata/attacks/helpers/one_symbol.csv
# expect: exit=1 status=failed failure.kind=protocol failure.hook=on_data
# message: local fill of order 1
import time

done = False


def on_data(ctx, history):
    global done
    if done:
        return
    done = True
    print("ATTACK %.6f" % time.time())
    oid = ctx.buy(ctx.symbol, 1, limit=0.01)
    # The bridge's note of the call's one market order (op 0 is a buy).
    ctx._market = (0, ctx.symbol, 1.0, oid)
