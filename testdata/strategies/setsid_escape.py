"""Fails with memory: a descendant leaves the process group (setsid and a
double fork), then allocates. It is still part of the tree, so it is counted
and killed."""
import os
import time

escaped = False


def on_data(ctx, history):
    global escaped
    if not escaped:
        escaped = True
        pids = ctx.artifact_path("pids.txt")
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                with open(pids, "a") as f:
                    f.write("%d\n" % os.getpid())
                hog = []
                while True:
                    hog.append(bytearray(32 << 20))
                    time.sleep(0.01)
            os._exit(0)
        os.wait()
    time.sleep(0.01)
