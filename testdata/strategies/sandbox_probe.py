"""Attempts what the sandbox forbids, and what it allows, on the first bar
(executing a memory file at import); on_finish returns {action: "ok" or the
error}. Passes either way, unless something was executed in the sandbox:
then the worker is gone and the run fails.

The home folder to try comes as a param: inside the sandbox neither $HOME nor
the password database tells it."""
import ctypes
import os
import socket
import struct
import subprocess
import sys
import threading

MANIFEST = {"params": {"home": "/root"}}
results = {}
tried = False
LOADER = "/lib64/ld-linux-x86-64.so.2"  # the x86-64 ABI's fixed path
EXIT = 42  # the exit code of every program the exec attempts start


def attempt(name, fn):
    try:
        fn()
        results[name] = "ok"
    except BaseException as exc:  # MemoryError, OSError, RuntimeError...
        results[name] = "%s: %s" % (type(exc).__name__, exc)


def tiny_elf():
    """A position-independent x86-64 program that exits with EXIT, linked like
    any dynamic program (an interpreter, a dynamic section with an empty
    symbol table) so that both the kernel and the dynamic loader run it; the
    loader maps it itself, so the file needs no execute permission."""
    code = b"\xbf" + struct.pack("<I", EXIT) + b"\xb8\x3c\x00\x00\x00\x0f\x05"  # exit(EXIT)
    code += b"\0" * (-len(code) % 8)
    interp = LOADER.encode() + b"\0" * (8 - len(LOADER) % 8)
    headers = 64 + 5 * 56
    entry = headers + len(interp)
    symtab = entry + len(code)  # a null symbol, whose first byte is also the empty string table
    dynamic = symtab + 24
    entries = ((5, symtab), (6, symtab), (10, 1), (11, 24), (0, 0))  # STRTAB, SYMTAB, STRSZ, SYMENT, NULL
    size = dynamic + 16 * len(entries)
    elf_header = struct.pack("<4s5B7xHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 0, 0,
                             3, 62, 1, entry, 64, 0, 0, 64, 56, 5, 0, 0, 0)
    program_headers = b"".join(struct.pack("<IIQQQQQQ", *h) for h in (
        (6, 4, 64, 64, 64, headers - 64, headers - 64, 8),  # PT_PHDR
        (3, 4, headers, headers, headers, len(LOADER) + 1, len(LOADER) + 1, 1),  # PT_INTERP
        (1, 7, 0, 0, 0, size, size, 0x1000),  # PT_LOAD (the loader relocates the dynamic section in place)
        (2, 6, dynamic, dynamic, dynamic, size - dynamic, size - dynamic, 8),  # PT_DYNAMIC
        (0x6474E551, 6, 0, 0, 0, 0, 0, 16),  # PT_GNU_STACK
    ))
    return (elf_header + program_headers + interp + code + b"\0" * 24
            + b"".join(struct.pack("<qQ", tag, value) for tag, value in entries))


def executes(do_exec):
    """Runs do_exec, which executes a program that exits with EXIT, in a child
    and checks that the program ran. Where fork is refused (the sandbox),
    do_exec runs in the worker itself: had it executed anything, the worker
    would be gone and the run would fail."""
    try:
        pid = os.fork()
    except PermissionError:
        do_exec()
        raise AssertionError("the exec returned without an error")
    if pid == 0:
        try:
            do_exec()
        finally:
            os._exit(127)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != EXIT:
        raise ChildProcessError("the child exited with %d, want %d" % (os.waitstatus_to_exitcode(status), EXIT))


def exec_memfd():
    """Executes an ELF written into a memory file through /proc/self/fd. In
    the sandbox, where memfd_create is refused, the file is the state page
    (fd 5), put back afterwards: the host does not read it during import."""
    try:
        fd, page = os.memfd_create("escape"), None
    except PermissionError:
        fd, page = 5, os.pread(5, 4096, 0)
    try:
        os.pwrite(fd, tiny_elf(), 0)
        executes(lambda: os.execv("/proc/self/fd/%d" % fd, ["escape"]))
    finally:
        if page is None:
            os.close(fd)
        else:
            os.pwrite(fd, page, 0)


def exec_loader(ctx):
    """Runs a file of artifacts/, which may be written but not executed,
    through the dynamic loader."""
    path = ctx.artifact_path("escape")
    with open(path, "wb") as f:
        f.write(tiny_elf())
    executes(lambda: os.execv(LOADER, [LOADER, path]))


def execveat_empty_path():
    """Executes the interpreter, which the sandbox must let the kernel
    execute, through a descriptor: execveat(fd, "", AT_EMPTY_PATH)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    AT_EMPTY_PATH, SYS_execveat = 0x1000, 322
    fd = os.open(sys.executable, os.O_RDONLY)
    argv = (ctypes.c_char_p * 4)(sys.executable.encode(), b"-c", b"import os; os._exit(%d)" % EXIT, None)
    envp = (ctypes.c_char_p * 1)(None)

    def run():
        if libc.syscall(ctypes.c_long(SYS_execveat), ctypes.c_long(fd), ctypes.c_char_p(b""), argv, envp,
                        ctypes.c_long(AT_EMPTY_PATH)) < 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))

    try:
        executes(run)
    finally:
        os.close(fd)


def posix_spawn():
    pid = os.posix_spawn(sys.executable, [sys.executable, "-c", "import os; os._exit(%d)" % EXIT], {})
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != EXIT:
        raise ChildProcessError("the spawned program exited with %d" % os.waitstatus_to_exitcode(status))


def memfd_create():
    os.close(os.memfd_create("hidden"))


def tcp():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.close()


def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"x", ("127.0.0.1", 9))
    s.close()


def unix():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.close()


def read_etc():
    with open("/etc/passwd") as f:
        f.read()


def read_home(ctx):
    os.listdir(ctx.params["home"])


def write_next_to_strategy():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".sandbox_probe_write")
    with open(path, "w") as f:
        f.write("x")
    os.remove(path)


def fork():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


def run_subprocess():
    subprocess.run(["true"], check=True)


def thread():
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()


def parent_secret():
    # stratbench is an ancestor: the worker's parent is the tree's init.
    pid = os.getppid()
    while pid > 0:
        with open("/proc/%d/environ" % pid, "rb") as f:
            if b"STRATBENCH_TEST_SECRET=" in f.read():
                return
        with open("/proc/%d/stat" % pid, "rb") as f:
            pid = int(f.read().rsplit(b")", 1)[1].split()[1])
    raise LookupError("secret not found")


def allocate():
    block = bytearray(700 << 20)
    block[-1] = 1


def write_artifact(ctx):
    with open(ctx.artifact_path("probe.txt"), "w") as f:
        f.write("written in the sandbox\n")


def read_own_folder():
    here = os.path.dirname(os.path.abspath(__file__))
    os.listdir(here)
    with open(os.path.join(here, os.path.basename(__file__))) as f:
        f.read()


attempt("exec_memfd", exec_memfd)


def on_data(ctx, history):
    global tried
    if tried:
        return
    tried = True
    for name, fn in [("tcp", tcp), ("udp", udp), ("unix", unix), ("read_etc", read_etc),
                     ("read_home", lambda: read_home(ctx)), ("write_next_to_strategy", write_next_to_strategy),
                     ("fork", fork), ("subprocess", run_subprocess), ("thread", thread),
                     ("parent_secret", parent_secret), ("allocate_700mib", allocate),
                     ("write_artifact", lambda: write_artifact(ctx)), ("read_own_folder", read_own_folder),
                     ("exec_loader", lambda: exec_loader(ctx)), ("execveat_empty_path", execveat_empty_path),
                     ("posix_spawn", posix_spawn), ("memfd_create", memfd_create)]:
        attempt(name, fn)


def on_finish(ctx):
    return results
