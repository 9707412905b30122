"""One strategy, several behaviours, chosen by the mode param: the runs of
one warm pool that break each limit, and one that waits beside them.

ok      counts bars
wait    sleeps 0.1 s a bar until the file named by the until param exists
linger  as wait, and its on_finish says "finishing" and waits for the file too
        (50 s at most)
memory  keeps 32 MiB more (touched) at every bar: over the memory limit
bomb    starts 40 sleeping children: over the process limit
loop    loops forever in its third on_data call: over the time limit
"""
import os
import subprocess
import time

MANIFEST = {"name": "warm-modes", "params": {"mode": "ok", "until": ""}}
bars = 0
kept = []
children = []
said = False


def on_data(ctx, history):
    global bars, said
    bars += 1
    mode = ctx.params["mode"]
    if mode in ("wait", "linger") and not os.path.exists(ctx.params["until"]):
        if not said:
            print("waiting", flush=True)
            said = True
        time.sleep(0.1)
    elif mode == "memory":
        kept.append(b"\x01" * (32 << 20))
    elif mode == "bomb" and not children:
        with open(ctx.artifact_path("pids.txt"), "a") as f:
            for _ in range(40):
                children.append(subprocess.Popen(["sleep", "600"]))
                f.write("%d\n" % children[-1].pid)
                f.flush()
        time.sleep(0.05)
    elif mode == "loop" and bars == 3:
        print("looping forever", flush=True)
        while True:
            pass


def on_finish(ctx):
    if ctx.params["mode"] == "linger":
        print("finishing", flush=True)
        deadline = time.monotonic() + 50
        while not os.path.exists(ctx.params["until"]) and time.monotonic() < deadline:
            time.sleep(0.05)
    return {"bars": bars}
