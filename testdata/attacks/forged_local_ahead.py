# attack: a lie in an answer whose batch ends at the budget, so that the host sends the rest of the batch ahead while it plays the answer out: a fill the bridge delivered itself at half the price (forge=price, its Worker's local market patched), or an order said to come from the on_execution call before it (forge=call, its command frame and local fill forged); the strategy trades on in the batch sent ahead, which must leave no trace in the failure (no command discarded)
# sandbox: both
# args: --data python/example/universe.csv
# expect: exit=1 status=failed failure.kind=protocol failure.hook=on_data commands_discarded=0
# message: itself at price
import gc
import os
import struct
import time

MANIFEST = {"params": {"forge": "price", "symbol": "ACME", "at": 60, "marker": ""}}
COMMAND = struct.Struct("<BBHqddQ")  # op, has limit, len(symbol), id, qty, limit, call
HEAD = struct.Struct("<QBIII")  # through, stopped, durations, commands, local fills
LOCAL = struct.Struct("<Qqddddq")  # call, order id, price, fee, cash, position, time
bars = 0  # on_data calls
orders = 0  # orders placed
stage = "trade"  # then "forged", "ahead"
forge_next = False
moved = {}  # forged command: its call -> the call it is said to come from
worker = None


def patch_calls(chan):
    send_frame, send = chan.send_frame, chan.send

    def forged_command(frame):
        # A command frame: its length and kind (5 bytes), then the command.
        global forge_next
        if forge_next:
            forge_next = False
            frame = bytearray(frame)
            op, has_limit, n, oid, qty, limit, call = COMMAND.unpack_from(frame, 5)
            COMMAND.pack_into(frame, 5, op, has_limit, n, oid, qty, limit, call - 1)
            moved[call] = call - 1
            frame = bytes(frame)
        return send_frame(frame)

    def forged_send(kind, payload):
        if kind == b"Y" and moved:
            payload = bytearray(payload)
            through, stopped, nd, nc, nl = HEAD.unpack_from(payload)
            off = HEAD.size + 8 * nd
            for i in range(nl):
                rec = list(LOCAL.unpack_from(payload, off + i * LOCAL.size))
                if rec[0] in moved:
                    rec[0] = moved.pop(rec[0])
                    LOCAL.pack_into(payload, off + i * LOCAL.size, *rec)
            payload = bytes(payload)
        return send(kind, payload)

    chan.send_frame, chan.send = forged_command, forged_send


def on_data(ctx, history):
    global bars, orders, stage, forge_next, worker
    bars += 1
    p = ctx.params
    if bars == 1:
        # The bridge's objects first, alone in their call: gc.get_objects()
        # may take longer than the batch's budget.
        for o in gc.get_objects():
            name = type(o).__name__
            if name == "Worker" and getattr(o, "local", None) is not None:
                worker = o
            elif p["forge"] == "call" and name == "Channel":
                patch_calls(o)
        return
    if p["symbol"] and ctx.symbol != p["symbol"]:
        return
    if stage == "forged":
        # The order's fill is delivered before this bar; then the batch's
        # budget ends the answer here, and the rest is sent ahead.
        stage = "ahead"
        spin = time.perf_counter() + 0.08
        while time.perf_counter() < spin:
            pass
        return
    if stage == "trade":
        orders += 1
        if orders == p["at"]:
            stage = "forged"
            print("ATTACK %.6f" % time.time())
            if p["forge"] == "price":
                buy, sell, fee_bps, allow_short = worker.local
                worker.local = (buy * 0.5, sell * 0.5, fee_bps, allow_short)
            else:
                forge_next = True
    if ctx.position(ctx.symbol) > 0:
        ctx.sell(ctx.symbol, 1)
    else:
        ctx.buy(ctx.symbol, 1)
    if stage == "ahead" and p["marker"] and not os.path.exists(p["marker"]):
        # Ordered in the batch sent ahead (the command is in the pipe).
        with open(p["marker"], "w"):
            pass


def on_execution(ctx, execution):
    pass
