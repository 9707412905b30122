"""bars_probe.py with numpy: the histories are arrays, and ctx.panel works."""
import numpy  # noqa: F401

from bars_probe import MANIFEST, on_bars, on_execution, on_finish  # noqa: F401
