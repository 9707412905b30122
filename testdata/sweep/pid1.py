"""Says in its metadata what the first process of its PID namespace runs:
stratbench's run init in a run forked from a warm template, the tree's
init in a run that started cold (an interpreter of its own); and whether
/proc is the namespace's own (else /proc/1 is another namespace's)."""
import os

MANIFEST = {"name": "sweep-pid1", "params": {"k": 1}}


def on_data(ctx, history):
    pass


def on_finish(ctx):
    with open("/proc/1/cmdline", "rb") as f:
        first = f.read().split(b"\0")[0].decode()
    return {"pid1": first, "own_proc": os.readlink("/proc/self") == str(os.getpid())}
