import json  # noqa: F401
import numpy  # noqa: F401  (this folder's numpy.py)
import countlib  # noqa: F401  (after a refused import: left to the run)


def on_data(ctx, history):
    pass
