"""A third-party module that sets an environment variable at import, as
some libraries do (polars sets its allocator's, numpy OpenBLAS's): a
cold start's strategy sees it set."""
import os

os.environ["ENVLIB_IMPORTED"] = "1"
