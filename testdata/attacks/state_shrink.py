# attack: shrink the shared state page (fd 5) so that the host faults (SIGBUS) when it next reads it
# sandbox: both
# expect: exit=0 status=passed
# (the page is sealed against shrinking: ftruncate fails, and the strategy raises if it did not)
import os
import time

tried = False


def on_data(ctx, history):
    global tried
    if tried:
        return
    tried = True
    print("ATTACK %.6f" % time.time())
    try:
        os.ftruncate(5, 0)
    except OSError as exc:
        print("ftruncate refused:", exc)
        return
    raise AssertionError("shrank the shared page under the host's mapping")
