"""breakpoint() 10,000 times in one call, then at 150 places: without a
debugger (--ci, a sweep, Ray) each place is noted once in the log, at most
100 places, and the run goes on (engine/debug_test.go, debugger_test.go)."""
PLACES = compile("\n".join("breakpoint()" for _ in range(150)), "places.py", "exec")


def on_data(ctx, history):
    if len(history) == 1:
        for _ in range(10_000):
            breakpoint()
        exec(PLACES)
