"""Fails with a timeout: the worker and its child ignore SIGTERM; the worker
then loops forever. Both are killed (SIGKILL cannot be ignored)."""
import os
import signal
import subprocess
import sys

started = False
CHILD = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"


def on_data(ctx, history):
    global started
    if not started:
        started = True
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child = subprocess.Popen([sys.executable, "-c", CHILD])
        with open(ctx.artifact_path("pids.txt"), "a") as f:
            f.write("%d\n%d\n" % (os.getpid(), child.pid))
        while True:
            pass
