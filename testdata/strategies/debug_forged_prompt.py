"""Writes a prompt of the debugger's own making on its pipe (fd 8), as if
it waited for a person, then computes for 30 s: a pause the workbench
grants to a prompt whose interpreter keeps running is not credited, and
the call times out (engine/debug_test.go)."""
import json
import struct
import time

PROMPT = json.dumps({"file": __file__, "line": 12, "function": "on_data", "source": [], "stack": [], "locals": [],
                     "output": "(forged)"}).encode()


def on_data(ctx, history):
    import os

    os.write(8, struct.pack(">I", len(PROMPT) + 1) + b"P" + PROMPT)
    end = time.time() + 30
    while time.time() < end:
        pass
