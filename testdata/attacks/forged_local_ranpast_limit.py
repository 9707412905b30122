# attack: with two symbols, a limit order on ONE far below the market that the bridge takes for a market order (its note of the call's one market order forged) and goes on past; TWO's bar then orders, so the limit goes to the host unfilled, before the yield's last call; when the bridge yields with the limit instead (it rests at the market), cancel it and try again
# sandbox: both
# args: --data testdata/attacks/helpers/two_symbols.csv
# expect: exit=1 status=failed failure.kind=protocol
# message: only a market order goes on
import time

step = 0
tried = None  # the last limit order placed, until it is canceled
ordered = False  # TWO's bar after the limit ordered


def on_data(ctx, history):
    # The bridge yields instead of going on past the limit when ONE's call
    # ends past the batch's budget or the batch holds no next bar of ONE
    # (a stall on a loaded machine): the limit then rests at the market,
    # which leaves nothing to attack and keeps the bridge from taking the
    # next one (it takes an order only when no other is open). TWO's bar
    # orders anyway (the market fills it); then ONE's next bar cancels the
    # limit, and once the cancel is back ONE's bar after tries again.
    global step, tried, ordered
    step += 1
    if step < 3:
        return
    if ctx.symbol == "TWO":
        if tried is not None and not ordered:
            ordered = True
            ctx.buy("TWO", 1)
        return
    if tried is not None:
        if tried in ctx._open:
            ctx.cancel(tried)
            tried = None
        return
    if ctx._open:
        return  # the cancel (or TWO's order) is not back yet
    if step == 3:
        print("ATTACK %.6f" % time.time())
    tried = ctx.buy("ONE", 1, limit=0.01)
    ordered = False
    # The bridge's note of the call's one market order (op 0 is a buy).
    ctx._market = (0, "ONE", 1.0, tried)
