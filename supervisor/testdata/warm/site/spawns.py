# Starts a process at import, which may read anything.
import subprocess
import sys

subprocess.run([sys.executable, "-c", "pass"], check=True)
