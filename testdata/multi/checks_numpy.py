"""checks.py with numpy: array histories, and ctx.panel checked too."""
import numpy  # noqa: F401

from checks import MANIFEST, on_bars, on_finish  # noqa: F401
