# attack: place a limit order far below the market, then have the bridge take it for a market order and deliver its fill itself; when the bridge yields with the order instead (it rests at the market), cancel it and try again
# sandbox: both
# args: --data testdata/attacks/helpers/one_symbol.csv
# expect: exit=1 status=failed failure.kind=protocol failure.hook=on_data
# message: local fill of order
import time

tried = None  # the last limit order placed, until it is canceled


def on_data(ctx, history):
    # The bridge yields instead of taking the order when the call ends
    # past the batch's budget (a stall on a loaded machine): the order
    # then rests at the market, which leaves nothing to attack and keeps
    # the bridge from taking the next one (it takes an order only when no
    # other is open). It is canceled, and once the cancel is back the next
    # bar tries again. An order the bridge took is no longer open.
    global tried
    if tried is not None:
        if tried in ctx._open:
            ctx.cancel(tried)
            tried = None
        return
    if ctx._open:
        return  # the cancel is not back yet
    if ctx._next_id == 1:
        print("ATTACK %.6f" % time.time())
    tried = ctx.buy(ctx.symbol, 1, limit=0.01)
    # The bridge's note of the call's one market order (op 0 is a buy).
    ctx._market = (0, ctx.symbol, 1.0, tried)
