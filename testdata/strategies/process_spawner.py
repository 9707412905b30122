"""Fails with processes: starts 40 sleeping children, more than the 32 allowed."""
import subprocess
import time

children = []


def on_data(ctx, history):
    if not children:
        with open(ctx.artifact_path("pids.txt"), "a") as f:
            for _ in range(40):
                children.append(subprocess.Popen(["sleep", "600"]))
                f.write("%d\n" % children[-1].pid)
                f.flush()
    time.sleep(0.05)
