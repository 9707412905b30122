"""Fails with memory: a grandchild process allocates until it is killed.

The worker starts a child that starts a grandchild; both record their pids in
the job's artifacts (pids.txt), and the grandchild touches 64 MiB at a time.
"""
import os
import subprocess
import sys
import time

HOG = r"""
import os, sys
with open(sys.argv[1], "a") as f:
    f.write("%d\n" % os.getpid())
chunks = []
while True:
    chunks.append(bytearray(64 << 20))
"""
CHILD = r"""
import os, subprocess, sys
with open(sys.argv[1], "a") as f:
    f.write("%d\n" % os.getpid())
subprocess.run([sys.executable, "-c", sys.argv[2], sys.argv[1]])
"""
started = False


def on_data(ctx, history):
    global started
    if not started:
        started = True
        subprocess.Popen([sys.executable, "-c", CHILD, ctx.artifact_path("pids.txt"), HOG])
    time.sleep(0.01)
