# attack: take 2.59 GiB of disk in milliseconds in artifacts/ with fallocate, keeping the files' size at 0 (FALLOC_FL_KEEP_SIZE, which RLIMIT_FSIZE does not check), in a run too short for a once-a-second check; in the sandbox then write as fast as it can
# sandbox: both
# expect: exit=0 status=passed metadata.fallocate=ok
# expect[root+sandbox]: exit=1 status=failed failure.kind=memory metadata=null
# expect[user+sandbox]: exit=1 status=failed failure.kind=memory metadata=null
# log: take 2.59 GiB, over their 2.00 GiB cap
# log[root+sandbox]:
# log[user+sandbox]:
# message[root+sandbox]: /artifacts)
# message[user+sandbox]: /artifacts)
# artifacts-disk[root+sandbox]: 2164260864
# artifacts-disk[user+sandbox]: 2164260864
"""Without the sandbox, where the strategy may write anywhere its user may,
each file is capped and the folder is checked while the worker runs and
once more when it has ended: the notice says what the files take, all
2.59 GiB. In the sandbox the folder is a tmpfs of the cap (2 GiB): fallocate
is refused (EOPNOTSUPP), the writes stop at the cap with ENOSPC whatever
their rate, and the folder counts as the tree's memory, so the run ends as
a memory violation; what it wrote is in the job folder afterwards, no more
than the cap (and the records stratbench adds at the end): the harness
checks the disk space the job's artifacts take."""
import ctypes
import errno
import os

from helpers.kernel import attack_line

FALLOC_FL_KEEP_SIZE = 1
TOTAL = int(2.59 * (1 << 30))
outcome = {}
state = {"written": 0, "file": 0, "done": False}
CHUNK = b"w" * (8 << 20)


def on_data(ctx, history):
    if state["done"]:
        return
    if not outcome:
        attack_line()
        libc = ctypes.CDLL(None, use_errno=True)
        left, i = TOTAL, 0
        while left > 0:
            n = min(left, 900 << 20)
            fd = os.open(ctx.artifact_path("alloc%d.bin" % i), os.O_WRONLY | os.O_CREAT, 0o644)
            r = libc.fallocate(fd, FALLOC_FL_KEEP_SIZE, ctypes.c_long(0), ctypes.c_long(n))
            os.close(fd)
            if r != 0:
                outcome["fallocate"] = errno.errorcode.get(ctypes.get_errno(), "?")
                break
            left, i = left - n, i + 1
        else:
            outcome["fallocate"] = "ok"
            state["done"] = True
            return
    # Refused: write instead, 64 MiB a bar (page faults are slow on some
    # machines: a hook has 5 s), in files of 512 MiB, until the folder is
    # full; then hold the files, bar after bar, while the samples count them.
    try:
        with open(ctx.artifact_path("write%d.bin" % (state["written"] // (512 << 20))), "ab", buffering=0) as f:
            for _ in range(8):
                state["written"] += f.write(CHUNK)
    except OSError as exc:
        outcome["write"] = "%s after %d bytes" % (errno.errorcode.get(exc.errno, "?"), state["written"])
        print(outcome, flush=True)
        state["done"] = True


def on_finish(ctx):
    return outcome
