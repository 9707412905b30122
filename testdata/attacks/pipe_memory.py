# attack: hold memory in filled pipe buffers, kernel memory in no process's RSS and outside RLIMIT_AS, in as many pipes as descriptors allow
# sandbox: yes
# expect: exit=0 status=passed metadata.stopped_by=EMFILE metadata.descriptor_limit=1024
"""Pipes cannot be denied (the protocol and select need them), so their
number is bounded instead: the sandbox's descriptor limit stops the loop.
The bytes held are in the metadata; the README gives the bound."""
import errno
import fcntl
import os
import resource
import time

F_SETPIPE_SZ = 1031
outcome = {}
held = []


def on_data(ctx, history):
    if outcome:
        return
    print("ATTACK %.6f" % time.time())
    chunk = b"x" * (1 << 20)
    total = 0
    while True:
        try:
            r, w = os.pipe()
        except OSError as exc:
            outcome["stopped_by"] = errno.errorcode.get(exc.errno, str(exc.errno))
            break
        held.extend((r, w))
        try:
            fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
        except OSError:  # beyond the user's pipe allowance: the default size
            pass
        os.set_blocking(w, False)
        try:
            while True:
                total += os.write(w, chunk)
        except BlockingIOError:
            pass
    outcome["descriptor_limit"] = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    outcome["pipes"] = len(held) // 2
    outcome["held_bytes"] = total
    print("holding %d bytes in %d pipes, stopped by %s" % (total, len(held) // 2, outcome["stopped_by"]))


def on_finish(ctx):
    return outcome
