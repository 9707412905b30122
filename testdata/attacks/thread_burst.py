# attack: start blocked threads as fast as it can in one hook, faster than any sampling, to run the machine out of pids
# sandbox: both
# expect: exit=1 status=failed failure.kind=processes failure.hook=on_data resources.peak_tasks>2048 resources.peak_tasks<=2558
# expect[fallback]: exit=1 status=failed failure.kind=processes failure.hook=on_data resources.peak_tasks>2048
# expect[root+sandbox]: exit=0 status=passed metadata.refused_after=0
# expect[user+sandbox]: exit=0 status=passed metadata.refused_after=0
# within: 6.5
# message: tasks (threads included) in 1 process, over the 2,048-task limit
"""In a PID namespace the kernel refuses new tasks at the tree's ceiling
(its pid_max, 2,560: at most 2,558 tasks), whatever the rate: the burst
gets "can't start new thread" there and holds what it has, and the samples
end the run as a processes violation. In the fallback the samples alone
stop it. The sandbox refuses the first thread."""
import threading
import time

from helpers.kernel import attack_line

hold = threading.Event()
outcome = {}
beacon = []


def on_data(ctx, history):
    if outcome:
        return
    beacon.append(open(ctx.artifact_path("beacon-burst"), "w"))
    attack_line()
    started = 0
    while True:
        try:
            threading.Thread(target=hold.wait, daemon=True).start()
        except RuntimeError as exc:
            outcome["refused_after"] = started
            print("refused after %d threads: %s" % (started, exc), flush=True)
            break
        started += 1
    if started:
        time.sleep(30)  # holds them: the samples end the run long before


def on_finish(ctx):
    return outcome
