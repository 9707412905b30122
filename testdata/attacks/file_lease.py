# attack: take a read lease on the strategy itself (the user's own open of it for writing, an editor saving it, then blocks until lease-break-time, 45 s), and the other fcntl commands that reach outside the worker: directory notifications, signal-driven I/O to another process, pipe sizes from the user's allowance
# sandbox: yes
# expect: exit=0 status=passed metadata.F_SETLEASE=EPERM metadata.F_NOTIFY=EPERM metadata.F_SETOWN=EPERM metadata.F_SETSIG=EPERM metadata.F_SETPIPE_SZ=EPERM metadata.F_GETFL=ok metadata.F_SETLK=ok metadata.sqlite=ok
"""Refused, the strategy carries on and the job passes. What the worker
needs of fcntl still works: flags, and record locks (SQLite takes them on a
database in the sandbox's /tmp). The lease is taken on the strategy's own
file, which its user owns as root; run as another user, the filter's EPERM
comes before the kernel's ownership check, so the expectation is the same."""
import fcntl
import os
import sqlite3

from helpers.kernel import attack_line, call

F_SETLEASE, F_NOTIFY, F_SETOWN, F_SETSIG, F_SETPIPE_SZ, F_GETFL, F_SETLK = 1024, 1026, 8, 10, 1031, 3, 6
DN_MODIFY, DN_MULTISHOT = 0x2, 0x80000000
outcome = {}
held = []


def on_data(ctx, history):
    if outcome:
        return
    attack_line()
    strategy = os.path.abspath(__file__)
    fd = os.open(strategy, os.O_RDONLY)
    held.append(fd)
    outcome["F_SETLEASE"] = call("fcntl", fd, F_SETLEASE, fcntl.F_RDLCK)
    folder = os.open(os.path.dirname(strategy), os.O_RDONLY | os.O_DIRECTORY)
    held.append(folder)
    outcome["F_NOTIFY"] = call("fcntl", folder, F_NOTIFY, DN_MODIFY | DN_MULTISHOT)
    r, w = os.pipe()
    held.extend((r, w))
    outcome["F_SETOWN"] = call("fcntl", r, F_SETOWN, 1)
    outcome["F_SETSIG"] = call("fcntl", r, F_SETSIG, 9)
    outcome["F_SETPIPE_SZ"] = call("fcntl", r, F_SETPIPE_SZ, 1 << 20)
    outcome["F_GETFL"] = call("fcntl", fd, F_GETFL, 0)
    with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "locked"), "w") as f:
        try:
            fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            outcome["F_SETLK"] = "ok"
        except OSError as exc:
            outcome["F_SETLK"] = str(exc)
    try:
        db = sqlite3.connect(ctx.artifact_path("db.sqlite"))
        db.execute("create table t (x)")
        db.execute("insert into t values (1)")
        db.commit()
        outcome["sqlite"] = "ok" if db.execute("select x from t").fetchall() == [(1,)] else "wrong"
        db.close()
    except sqlite3.Error as exc:
        outcome["sqlite"] = str(exc)
    print(outcome)


def on_finish(ctx):
    return outcome
