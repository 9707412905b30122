# attack: hold 3 GiB in a new memory file written with pwrite and never mapped: such pages are in no process's RSS and outside RLIMIT_AS
# sandbox: yes
# expect: exit=0 status=passed metadata.memfd_create=EPERM
"""Refused, the strategy carries on and the job passes. Had memfd_create gone
through, the job would pass too, holding memory nothing counts: the expected
metadata is what tells the two apart."""
import errno
import os
import time

outcome = {}
hidden = []


def on_data(ctx, history):
    if outcome:
        return
    print("ATTACK %.6f" % time.time())
    try:
        fd = os.memfd_create("hidden")
    except OSError as exc:
        outcome["memfd_create"] = errno.errorcode.get(exc.errno, str(exc.errno))
        print("memfd_create refused:", exc)
        return
    hidden.append(fd)
    chunk = b"x" * (64 << 20)
    written = 0
    while written < 3 << 30:
        written += os.pwrite(fd, chunk, written)
    outcome["memfd_create"] = "ok"
    outcome["hidden_bytes"] = written
    print("holding", written, "bytes in a memory file")


def on_finish(ctx):
    return outcome
