# attack: on_execution answers rejections with 2, 0, 1 new rejected orders in rotation, so no simple count of executions ever drains
# sandbox: both
# expect: exit=1 status=failed failure.kind=timeout failure.hook=on_execution
# within: 6.5
import time

started = False
turn = 0


def on_data(ctx, history):
    global started
    if not started:
        started = True
        print("ATTACK %.6f" % time.time())
        ctx.buy("NO-SUCH-SYMBOL", 1)


def on_execution(ctx, execution):
    global turn
    turn += 1
    for _ in range((2, 0, 1)[turn % 3]):
        ctx.buy("NO-SUCH-SYMBOL", 1)
    if turn % 3 == 1:
        # Keep at least one order in flight whatever the rotation says.
        ctx.buy("NO-SUCH-SYMBOL", 1)
