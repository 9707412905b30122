"""The strategy's helper: it uses thirdlib when it can be imported."""
try:
    import thirdlib

    LOT = thirdlib.lot()
except ImportError:
    LOT = 1
