"""Fails with processes: starts 40 sleeping children, more than the 32 allowed."""
import os
import subprocess
import time

children = []


def on_data(ctx, history):
    if not children:
        for _ in range(40):
            children.append(subprocess.Popen(["sleep", "600"]))
            with open(os.environ["STRATBENCH_TEST_PIDS"], "a") as f:
                f.write("%d\n" % children[-1].pid)
    time.sleep(0.05)
