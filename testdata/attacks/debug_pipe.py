# attack: writes the debugger's pipe (fd 8) a prompt of its own making, garbage and an oversized frame, then sleeps 30 s in on_data as if a person held it at the prompt
# sandbox: both
# expect: exit=1 status=failed failure.kind=timeout failure.hook=on_data failure.event_index=0
# within: 6.5
# Outside the workbench the host closed its ends of the debugger's pipes
# before the worker started: nothing written there reaches it, and nothing
# pauses a hook's time limit. (In the workbench a bad frame there is a
# protocol failure: engine/debug_test.go.)
import json
import os
import struct
import time

PROMPT = json.dumps({"file": __file__, "line": 1, "function": "on_data", "source": [], "stack": [], "locals": [],
                     "output": ""}).encode()


def on_data(ctx, history):
    for data in (struct.pack(">I", len(PROMPT) + 1) + b"P" + PROMPT, b"\xff\xff\xff\x00garbage",
                 struct.pack(">I", 1 << 30) + b"P" + b"x" * 65536):
        try:
            os.write(8, data)
        except OSError as exc:
            print("the debugger's pipe:", type(exc).__name__)
    print("ATTACK %.6f" % time.time())
    time.sleep(30)
    print("a forged prompt bought 30 s")
