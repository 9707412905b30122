# attack: after a fill the bridge delivered itself, its yield claims one call more than the batch made (the bridge's channel patched), with a duration for it; the strategy buys on every bar until one fill is the bridge's
# sandbox: both
# args: --data testdata/attacks/helpers/one_symbol.csv
# expect: exit=1 status=failed failure.kind=protocol failure.hook=on_data
# message: yield through call
import gc
import struct
import time

HEAD = struct.Struct("<QBIII")  # through, stopped, durations, commands, local fills
stage = 0


def forge(send):
    def forged(kind, payload):
        if kind == b"Y":
            payload = bytes(payload)
            through, stopped, nd, nc, nl = HEAD.unpack_from(payload)
            if nl:
                durations, rest = payload[HEAD.size : HEAD.size + 8 * nd], payload[HEAD.size + 8 * nd :]
                payload = HEAD.pack(through + 1, stopped, nd + 1, nc, nl) + durations + bytes(8) + rest
        return send(kind, payload)

    return forged


def on_data(ctx, history):
    # The patch and the order go in two calls: gc.get_objects() can take
    # longer than a batch's time budget on a loaded machine, and the
    # bridge then yields after the call instead of delivering the fill
    # itself, which would leave nothing to attack.
    global stage
    if stage == 0:
        stage = 1
        for o in gc.get_objects():
            if type(o).__name__ == "Channel":
                o.send = forge(o.send)
        return
    if stage >= 1:
        # One buy a bar: the bridge yields instead of delivering a fill
        # itself when the call ends past the batch's budget or on the
        # batch's last bar (a stall on a loaded machine), and the yield
        # then carries no fill of the bridge's to forge; the next bar
        # tries again.
        if stage == 1:
            stage = 2
            print("ATTACK %.6f" % time.time())
        ctx.buy(ctx.symbol, 1)


def on_execution(ctx, execution):
    pass
