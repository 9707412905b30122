"""A third-party module that looks on sys.path at import: a cold start's
has the strategy's folder first and not the bridge's, where the bridge's
own file lies (python/bridge.go names it stratbench_bridge.py)."""
import importlib.util

BRIDGE_ON_PATH = importlib.util.find_spec("stratbench_bridge") is not None
