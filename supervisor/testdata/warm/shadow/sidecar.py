# A module of the strategy's folder with a side effect at import.
import os

open(os.path.join(os.environ["WARM_MARKS"], "sidecar-ran"), "w").close()
print("sidecar imported", flush=True)
