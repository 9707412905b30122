"""testdata/strategies/local_fills.py without on_execution: the fills a
worker delivers itself then cost no hook call."""
from local_fills import on_data, on_finish  # noqa: F401

MANIFEST = {"name": "local-fills-noexec", "params": {"mode": "ok", "at": 0, "qty": 3.5}, "history": 8}
