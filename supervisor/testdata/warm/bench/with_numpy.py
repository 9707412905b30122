# The warm start benchmark's strategy that imports numpy.
import numpy as np


def on_data(ctx, history):
    print("hook", float(np.mean(history.close)), flush=True)
