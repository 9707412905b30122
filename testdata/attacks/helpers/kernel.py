"""Raw system calls for the attacks on the sandbox's filter: each returns
"ok" or the name of the errno it failed with, and never raises, so that an
attack can record what the kernel (or the filter) answered."""
import ctypes
import errno
import os

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long

# x86-64 system call numbers.
NR = {
    "fcntl": 72, "flock": 73, "ioctl": 16, "fchmod": 91, "fchown": 93, "modify_ldt": 154, "sync": 162,
    "fsetxattr": 190, "fremovexattr": 199, "io_setup": 206, "io_destroy": 207, "io_submit": 209,
    "migrate_pages": 256, "move_pages": 279, "fallocate": 285, "syncfs": 306, "pidfd_send_signal": 424,
    "pidfd_open": 434, "cachestat": 451, "statmount": 457, "listmount": 458,
}


def errname(e):
    return errno.errorcode.get(e, str(e))


def raw(name, *args):
    """Calls the system call name; returns (result, errno name or "ok")."""
    ctypes.set_errno(0)
    r = _libc.syscall(ctypes.c_long(NR[name]), *[_arg(a) for a in args])
    if r == -1:
        return r, errname(ctypes.get_errno())
    return r, "ok"


def _arg(a):
    if isinstance(a, ctypes._SimpleCData):
        return a
    if isinstance(a, bytes):
        return ctypes.c_char_p(a)
    return ctypes.c_long(a)


def call(name, *args):
    """Calls the system call name; returns "ok" or its errno's name."""
    return raw(name, *args)[1]


def addr(buf):
    return ctypes.c_long(ctypes.addressof(buf))


def attack_line():
    """The line the harness times the attack from."""
    import time
    print("ATTACK %.6f" % time.time(), flush=True)


def bridge_file():
    """A file the strategy may read but not write that its user owns,
    whoever runs stratbench: the bridge, in stratbench's cache."""
    import __main__
    return os.path.realpath(__main__.__file__)
