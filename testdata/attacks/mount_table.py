# attack: list the mounts of its namespace and read each one's path and options with listmount and statmount, which /proc (hidden by Landlock) would otherwise tell
# sandbox: yes
# expect: exit=0 status=passed metadata.listmount=EPERM metadata.statmount=EPERM
"""Refused, the strategy carries on and the job passes. The requests are
struct mnt_id_req (version 0, 24 bytes) for the root mount's id (LSMT_ROOT)."""
import ctypes
import struct

from helpers.kernel import addr, attack_line, call

LSMT_ROOT = 0xFFFFFFFFFFFFFFFF
STATMOUNT_MNT_POINT = 0x10
outcome = {}


def on_data(ctx, history):
    if outcome:
        return
    attack_line()
    req = ctypes.create_string_buffer(struct.pack("<IIQQ", 24, 0, LSMT_ROOT, 0))
    ids = (ctypes.c_uint64 * 64)()
    outcome["listmount"] = call("listmount", addr(req), addr(ids), 64, 0)
    sreq = ctypes.create_string_buffer(struct.pack("<IIQQ", 24, 0, LSMT_ROOT, STATMOUNT_MNT_POINT))
    out = ctypes.create_string_buffer(4096)
    outcome["statmount"] = call("statmount", addr(sreq), addr(out), 4096, 0)
    print(outcome)


def on_finish(ctx):
    return outcome
