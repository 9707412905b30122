# Imports numpy at the top, as most strategies do: the template preloads it.
import numpy as np

print("numpy at", id(np), flush=True)


def on_data(ctx, history):
    print("hook", type(history.close).__name__, float(np.sum(history.close)), flush=True)
