# Reads a file at import (its path in WARM_CONF): a run forked from a
# template holds what the template read.
import os

with open(os.environ["WARM_CONF"]) as f:
    CONF = f.read()
