# attack: write an ELF into artifacts/ and run it through the dynamic loader (ld.so FILE): the kernel must be allowed to execute the loader, Landlock cannot tell the two uses apart
# sandbox: yes
# expect: exit=0 status=passed metadata.loader_exec=EPERM
"""The file is not executable, neither by its mode nor under Landlock: the
loader only reads and maps it. Refused, the strategy carries on and the job passes; had the exec
gone through, the worker would have become the ELF (which prints and exits)
and the job would have failed."""
import errno
import os
import time

from helpers.tiny_elf import LOADER, tiny_elf
outcome = {}


def on_data(ctx, history):
    if outcome:
        return
    path = ctx.artifact_path("escape")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, tiny_elf(b"escaped through the loader\n"))
    os.close(fd)
    print("ATTACK %.6f" % time.time())
    try:
        os.execv(LOADER, [LOADER, path.encode()])
    except OSError as exc:
        outcome["loader_exec"] = errno.errorcode.get(exc.errno, str(exc.errno))
        print("exec through the loader refused:", exc)


def on_finish(ctx):
    return outcome
