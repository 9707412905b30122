# attack: install a 16-bit code segment in its local descriptor table (modify_ldt, a long source of kernel bugs that no Python library needs)
# sandbox: yes
# expect: exit=0 status=passed metadata.modify_ldt=EPERM
"""Refused, the strategy carries on and the job passes. The descriptor is
struct user_desc for entry 0: base 0, limit 0xfff, a 16-bit code segment."""
import ctypes
import struct

from helpers.kernel import addr, attack_line, call

outcome = {}


def on_data(ctx, history):
    if outcome:
        return
    attack_line()
    # entry_number, base_addr, limit, then the flags: seg_32bit=0, contents=2 (code), ...
    desc = ctypes.create_string_buffer(struct.pack("<IIII", 0, 0, 0xFFF, 2 << 1))
    outcome["modify_ldt"] = call("modify_ldt", 1, addr(desc), 16)
    print(outcome)


def on_finish(ctx):
    return outcome
