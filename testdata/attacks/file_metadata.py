# attack: change a file it may only read, through a descriptor opened to read, where Landlock checks nothing: fchmod it (to 000, it could), fchown it, set an extended attribute, set its inode flags (FS_IOC_SETFLAGS), take an exclusive flock on it against everyone else
# sandbox: yes
# expect: exit=0 status=passed metadata.fchmod=EPERM metadata.fchown=EPERM metadata.fsetxattr=EPERM metadata.FS_IOC_SETFLAGS=ENOTTY metadata.flock=ENOSYS metadata.mode_kept=true
"""The file is the bridge, in stratbench's cache: its user owns it whoever
runs stratbench, and the sandbox lets the worker read it only. Refused, the
strategy carries on and the job passes. The changes it asks for leave the
file as it is (its own mode, owner and flags again): where they go through,
"ok" in the metadata says so without breaking the cache, which other runs
of the same user share (measured before the filter refused it: fchmod to
000 made every later sandboxed run of that user fail to start)."""
import array
import os
import stat

from helpers.kernel import addr, attack_line, bridge_file, call

FS_IOC_GETFLAGS, FS_IOC_SETFLAGS = 0x80086601, 0x40086602
LOCK_EX, LOCK_NB = 2, 4
outcome = {}
held = []


def on_data(ctx, history):
    if outcome:
        return
    target = bridge_file()
    before = stat.S_IMODE(os.stat(target).st_mode)
    fd = os.open(target, os.O_RDONLY)
    held.append(fd)
    attack_line()
    outcome["fchmod"] = call("fchmod", fd, before)
    outcome["fchown"] = call("fchown", fd, os.getuid(), os.getgid())
    name, value = b"user.stratbench_attack\0", b"x"
    outcome["fsetxattr"] = call("fsetxattr", fd, name, value, len(value), 0)
    if outcome["fsetxattr"] == "ok":
        call("fremovexattr", fd, name)
    flags = array.array("l", [0])
    got = call("ioctl", fd, FS_IOC_GETFLAGS, flags.buffer_info()[0])
    outcome["FS_IOC_SETFLAGS"] = call("ioctl", fd, FS_IOC_SETFLAGS, flags.buffer_info()[0]) if got == "ok" else "get: " + got
    outcome["flock"] = call("flock", fd, LOCK_EX | LOCK_NB)
    outcome["mode_kept"] = stat.S_IMODE(os.stat(target).st_mode) == before
    print(outcome)


def on_finish(ctx):
    return outcome
