# attack: take every native AIO event of the machine (io_setup: one system-wide pool, fs.aio-max-nr) and hold it, so that io_setup fails with EAGAIN for every other program while the run lasts
# sandbox: yes
# expect: exit=0 status=passed metadata.io_setup=ENOSYS metadata.held=0
"""Refused (ENOSYS, a kernel without AIO), the strategy carries on and the
job passes. Had io_setup gone through, the strategy would have held all
65,536 events (measured: 48 s, and a host process's io_setup failed with
EAGAIN): the expected metadata tells the two apart."""
import ctypes

from helpers.kernel import attack_line, addr, raw

outcome = {}
contexts = []


def on_data(ctx, history):
    if outcome:
        return
    attack_line()
    held = 0
    first = None
    for size in (65536, 32768, 4096, 512, 64, 1):
        while True:
            handle = ctypes.c_ulong(0)
            _, err = raw("io_setup", size, addr(handle))
            first = first or err
            if err != "ok":
                break
            contexts.append(handle)
            held += size
    outcome["io_setup"] = first
    outcome["held"] = held
    print("io_setup:", first, "held", held, "events")


def on_finish(ctx):
    return outcome
