# attack: shrink the shared state page (fd 5) so that the host faults (SIGBUS) when it next reads it
# sandbox: both
# expect: exit=0 status=passed
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
        print("ftruncate(5, 0) succeeded")
    except OSError as exc:
        print("ftruncate refused:", exc)
