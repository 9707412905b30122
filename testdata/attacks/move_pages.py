# attack: move pages between NUMA nodes with move_pages and migrate_pages, which act on another process's memory when given its pid
# sandbox: yes
# expect: exit=0 status=passed metadata.move_pages=EPERM metadata.migrate_pages=EPERM
"""Refused, the strategy carries on and the job passes. The calls name the
tree's init (pid 1 in the sandbox's namespace) and the worker itself."""
import ctypes
import mmap

from helpers.kernel import addr, attack_line, call

outcome = {}


def on_data(ctx, history):
    if outcome:
        return
    attack_line()
    page = mmap.mmap(-1, mmap.PAGESIZE)
    page[0] = 1
    pages = (ctypes.c_void_p * 1)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
    status = (ctypes.c_int * 1)()
    outcome["move_pages"] = call("move_pages", 0, 1, addr(pages), 0, addr(status), 0)
    mask = ctypes.c_ulong(1)
    outcome["migrate_pages"] = call("migrate_pages", 1, 64, addr(mask), addr(mask))
    print(outcome)


def on_finish(ctx):
    return outcome
