# Records, at import, what a module sees of its process: the command line,
# sys.path, the working folder, whether the bridge's own file is on
# sys.path, a variable another module set at import.
import importlib.util
import json
import os
import sys

import setsenv  # noqa: F401

STATE = json.dumps({
    "argv": sys.argv,
    "orig_argv": getattr(sys, "orig_argv", None),
    "path": sys.path,
    "cwd": os.getcwd(),
    "bridge_on_path": importlib.util.find_spec("stratbench_bridge") is not None,
    "env": os.environ.get("WARM_SET_AT_IMPORT"),
}, sort_keys=True)
