# Shadows the real numpy for strategies of this folder, as a cold start
# (the folder first on sys.path) would import it. Leaves a mark.
import os

open(os.path.join(os.environ["WARM_MARKS"], "numpy-ran"), "w").close()
print("folder numpy imported", flush=True)
