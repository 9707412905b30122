"""What third-party modules made of the process at import decides the lot:
a variable one set in the environment, the command line another read, what
a third found on sys.path. A warm run must see what a cold start sees.
Needs testdata/warm/site on PYTHONPATH."""
import os

import argvlib
import bridgeprobe
import envlib  # noqa: F401

MANIFEST = {"name": "warm-import-state", "params": {"k": 1}}
LOT = 1 + (os.environ.get("ENVLIB_IMPORTED") == "1") + 2 * argvlib.TEMPLATE_IN_ARGV + 4 * bridgeprobe.BRIDGE_ON_PATH
bars = 0
bought = None


def on_data(ctx, history):
    global bars, bought
    bars += 1
    if bars == 3:
        print("lot", LOT, flush=True)
        bought = ctx.symbol
        ctx.buy(ctx.symbol, LOT * ctx.params["k"])
    elif bars == 30:
        ctx.sell(bought, ctx.position(bought))
