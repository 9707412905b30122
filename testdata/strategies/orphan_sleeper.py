"""Runs slowly after leaving behind a setsid'd, double-forked sleeper: used to
check that a stratbench killed with SIGKILL has its leftovers killed at the
next start."""
import os
import time

started = False


def on_data(ctx, history):
    global started
    if not started:
        started = True
        pids = ctx.artifact_path("pids.txt")
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                with open(pids, "a") as f:
                    f.write("%d\n" % os.getpid())
                time.sleep(600)
            os._exit(0)
        os.wait()
    time.sleep(0.05)
