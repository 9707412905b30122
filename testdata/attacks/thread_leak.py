# attack: leak one blocked thread per bar, all in one process: such a run used to pass with a peak of one process while it held 6,001 threads (the machine's pid_max was 32,768)
# sandbox: both
# expect: exit=1 status=failed failure.kind=processes resources.peak_processes=1 resources.peak_tasks>2048 limits.tasks=2048
# expect[root+sandbox]: exit=0 status=passed metadata.refused_at=0
# expect[user+sandbox]: exit=0 status=passed metadata.refused_at=0
# message: tasks (threads included) in 1 process, over the 2,048-task limit
"""The tree's tasks, threads included, are bounded (2,048): the samples see
the 2,049th thread and the run fails as a processes violation that says
threads. The sandbox refuses threads outright: the first start fails, the
strategy notes it and the job passes."""
import threading

from helpers.kernel import attack_line

hold = threading.Event()
state = {"started": 0}
outcome = {}
beacon = []


def on_data(ctx, history):
    if "refused_at" in outcome:
        return
    if not beacon:
        beacon.append(open(ctx.artifact_path("beacon-threads"), "w"))
        attack_line()
    try:
        threading.Thread(target=hold.wait, daemon=True).start()
    except RuntimeError:
        outcome["refused_at"] = state["started"]
        return
    state["started"] += 1


def on_finish(ctx):
    return outcome
