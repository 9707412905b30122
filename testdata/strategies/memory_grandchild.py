"""Fails with memory: a grandchild process allocates until it is killed.

The worker starts a child that starts a grandchild; the grandchild writes its
pid to $STRATBENCH_TEST_PIDS and touches 64 MiB at a time.
"""
import os
import subprocess
import sys
import time

HOG = r"""
import os, sys
with open(os.environ["STRATBENCH_TEST_PIDS"], "a") as f:
    f.write("%d\n" % os.getpid())
chunks = []
while True:
    chunks.append(bytearray(64 << 20))
"""
CHILD = "import subprocess, sys; subprocess.run([sys.executable, '-c', %r])" % HOG
started = False


def on_data(ctx, history):
    global started
    if not started:
        started = True
        with open(os.environ["STRATBENCH_TEST_PIDS"], "a") as f:
            f.write("%d\n" % os.getpid())
        subprocess.Popen([sys.executable, "-c", CHILD])
    time.sleep(0.01)
