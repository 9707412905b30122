# Prints what stateprobe saw at import (in the template, for a run forked
# from one), and what the strategy sees when it is imported: among them,
# which modules are imported already (the template's own are not).
import os
import sys

import stateprobe

print("state", stateprobe.STATE, flush=True)
print("strategy", os.environ.get("WARM_SET_AT_IMPORT"), sys.path[0], os.getcwd(),
      [m for m in ("ast", "ctypes", "selectors", "socket", "_posixsubprocess", "subprocess") if m in sys.modules],
      flush=True)


def on_data(ctx, history):
    pass
