# The debugger's bridge test (debug_test.go): breakpoint() at the third
# bar, then two lines a step can reach.
def on_data(ctx, history):
    n = len(history)
    if n == 3:
        breakpoint()
        seen = n * 10
        print("after the stop", seen)
