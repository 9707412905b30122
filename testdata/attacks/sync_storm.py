# attack: write back every dirty page of the machine again and again (sync), and of the file system of the strategy's folder (syncfs), and watch which pages of a file other programs have read (cachestat)
# sandbox: yes
# expect: exit=0 status=passed metadata.sync=EPERM metadata.syncfs=EPERM metadata.cachestat=EPERM
"""Refused, the strategy carries on and the job passes."""
import ctypes
import os
import struct

from helpers.kernel import addr, attack_line, call

outcome = {}


def on_data(ctx, history):
    if outcome:
        return
    attack_line()
    for _ in range(100):
        outcome["sync"] = call("sync")
    fd = os.open(os.path.abspath(__file__), os.O_RDONLY)
    outcome["syncfs"] = call("syncfs", fd)
    rng = ctypes.create_string_buffer(struct.pack("<QQ", 0, 0))
    stat = ctypes.create_string_buffer(64)
    outcome["cachestat"] = call("cachestat", fd, addr(rng), addr(stat), 0)
    os.close(fd)
    print(outcome)


def on_finish(ctx):
    return outcome
