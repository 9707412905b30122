# Uses the importing strategy's folder_cfg when one is on sys.path (a cold
# start's has the strategy's folder first), its default otherwise.
try:
    import folder_cfg
except ImportError:
    folder_cfg = None
