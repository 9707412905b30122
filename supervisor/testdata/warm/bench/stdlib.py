# The warm start benchmark's strategy without third-party imports.
import json  # noqa: F401
import statistics  # noqa: F401


def on_data(ctx, history):
    print("hook", flush=True)
