"""Orders once a batch, in the call at which the bridge's budget passes:
each call spins `spin_us` microseconds; the call that would end past the
budget spins on to 1 ms past it, then buys (when flat) or sells its whole
position. It reads the budget from the bridge's bar loop (its caller's
frame), which no strategy should do: the test of the budget's exception
for an order (TestBudgetPastAnOrder) needs an order at exactly that
call. Its metadata counts those orders."""
import sys
import time

MANIFEST = {"name": "budget-order", "params": {"spin_us": 20}, "history": 2}
last = None  # the budget of the batch this strategy ordered in
orders = 0


def on_data(ctx, history):
    global last, orders
    budget_end = sys._getframe(1).f_locals["budget_end"]
    spin = ctx.params["spin_us"] * 1000
    now = time.perf_counter_ns()
    if budget_end == last or now + spin < budget_end:
        end = now + spin
        while time.perf_counter_ns() < end:
            pass
        return
    while time.perf_counter_ns() < budget_end + 1_000_000:
        pass
    last = budget_end
    orders += 1
    pos = ctx.position(ctx.symbol)
    if pos > 0:
        ctx.sell(ctx.symbol, pos)
    else:
        ctx.buy(ctx.symbol, 1)


def on_finish(ctx):
    return {"orders": orders}
