# Prints what stateprobe saw at import (in the template, for a run forked
# from one), and what the strategy sees when it is imported.
import os
import sys

import stateprobe

print("state", stateprobe.STATE, flush=True)
print("strategy", os.environ.get("WARM_SET_AT_IMPORT"), sys.path[0], os.getcwd(), flush=True)


def on_data(ctx, history):
    pass
