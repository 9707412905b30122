# attack: leave a 256 MiB System V segment (touched) and a 64 MiB file in /dev/shm behind: both used to outlive the job and keep its memory
# sandbox: both
# expect: exit=0 status=passed metadata.shmget=ok metadata.dev_shm=ok
# expect[root+sandbox]: exit=0 status=passed metadata.shmget=EPERM metadata.dev_shm=EACCES
# expect[user+sandbox]: exit=0 status=passed metadata.shmget=EPERM metadata.dev_shm=EACCES
# leaks[fallback]: sysv devshm
"""The tree has its own IPC namespace, which ends with it, and its own
/dev/shm, a tmpfs of its mount namespace counted as its memory: nothing
named after the job is left on the host (the harness looks for the
segment's key and the file's name). In the fallback, without namespaces,
both stay, as the README says (the harness checks that too, and removes
them). The sandbox refuses shmget and /dev/shm."""
import ctypes
import errno
import os

from helpers.kernel import attack_line
from helpers.tag import job_id, sysv_key

outcome = {}


def on_data(ctx, history):
    if outcome:
        return
    attack_line()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    size = 256 << 20
    shmid = libc.shmget(sysv_key(ctx), ctypes.c_size_t(size), 0o1600)
    if shmid < 0:
        outcome["shmget"] = errno.errorcode.get(ctypes.get_errno(), "?")
    else:
        addr = libc.shmat(shmid, None, 0)
        ctypes.memset(addr, 1, size)
        libc.shmdt(ctypes.c_void_p(addr))
        outcome["shmget"] = "ok"
    try:
        with open("/dev/shm/stratbench-attack-" + job_id(ctx), "wb") as f:
            for _ in range(64):
                f.write(b"x" * (1 << 20))
        outcome["dev_shm"] = "ok"
    except OSError as exc:
        outcome["dev_shm"] = errno.errorcode.get(exc.errno, str(exc.errno))
    print(outcome)


def on_finish(ctx):
    return outcome
