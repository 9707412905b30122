# attack: write an ELF into the inherited memory file (fd 5, the state page) and execute it through /proc/self/fd/5: a memory file lives on an internal mount that Landlock does not restrict
# sandbox: yes
# expect: exit=0 status=passed metadata.memfd_exec=EPERM
"""Runs at import, while the host does not read the page yet, and puts the
page back afterwards. Refused, the strategy carries on and the job passes;
had the exec gone through, the worker would have become the ELF (which
prints and exits) and the job would have failed. EPERM is the exec filter's
answer, given before the kernel looks at the file: the page is also created
non-executable where the kernel can, which alone would answer EACCES."""
import errno
import os
import time

from helpers.tiny_elf import tiny_elf

outcome = {}


def code(exc):
    return errno.errorcode.get(exc.errno, str(exc.errno))


print("ATTACK %.6f" % time.time())
page = os.pread(5, 4096, 0)
try:
    os.pwrite(5, tiny_elf(b"escaped from a memory file\n"), 0)
    outcome["memfd_write"] = "ok"
except OSError as exc:  # a page sealed against writes: the exec is tried all the same
    outcome["memfd_write"] = code(exc)
try:
    os.execv("/proc/self/fd/5", ["escape"])
except OSError as exc:
    outcome["memfd_exec"] = code(exc)
    print("exec of the memory file refused:", exc)
finally:
    if outcome["memfd_write"] == "ok":
        os.pwrite(5, page, 0)


def on_data(ctx, history):
    pass


def on_finish(ctx):
    return outcome
