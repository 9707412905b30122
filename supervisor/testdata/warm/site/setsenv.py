# Sets an environment variable at import, as some libraries do.
import os

os.environ["WARM_SET_AT_IMPORT"] = "yes"
