"""Sandbox probe: attempts forbidden and allowed actions, one JSON line each.

Usage: python3 probe.py CONFIG_JSON

Each line is {"action": NAME, "ok": BOOL, "error": "Type: message"}; some
actions add fields. The test runs this probe with and without the sandbox:
every forbidden action must fail inside and succeed outside, every allowed
action must succeed in both. execv runs last: when it succeeds, /bin/sh
replaces the probe and prints its line.

Like the worker, the probe first puts the exec filter in force with the
bridge's own function (a no-op outside the sandbox).
"""

import ctypes
import importlib.util
import json
import os
import struct
import sys

CFG = json.loads(sys.argv[1])


def _forbid_exec():
    spec = importlib.util.spec_from_file_location("stratbench_bridge", CFG["bridge"])
    bridge = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bridge)
    problem = bridge.forbid_exec()
    if problem is not None:
        sys.stderr.write("stratbench sandbox: %s\n" % problem)
        sys.exit(121)


_forbid_exec()
SCRIPT_DIR = os.path.dirname(os.path.abspath(__file__))
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long


def emit(action, ok, error="", **extra):
    line = {"action": action, "ok": ok, "error": error}
    line.update(extra)
    print(json.dumps(line), flush=True)


def attempt(action):
    """Decorator: run the function now and report whether it raised."""

    def run(fn):
        try:
            fn()
        except BaseException as e:  # MemoryError, RuntimeError, OSError...
            emit(action, False, f"{type(e).__name__}: {e}", errno=getattr(e, "errno", None) or 0)
        else:
            emit(action, True)
        return fn

    return run


def syscall(nr, *args):
    """Raw system call; raises OSError on failure like os functions do."""
    ret = LIBC.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    if ret < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return ret


def tiny_elf(exit_code):
    """A position-independent x86-64 program that exits with exit_code,
    linked like any dynamic program (an interpreter, a dynamic section with an
    empty symbol table) so that both the kernel and the dynamic loader run
    it; the loader maps it itself, so the file needs no execute permission."""
    code = b"\xbf" + struct.pack("<I", exit_code) + b"\xb8\x3c\x00\x00\x00\x0f\x05"  # exit(exit_code)
    code += b"\0" * (-len(code) % 8)
    loader = CFG["loader"].encode()
    interp = loader + b"\0" * (8 - len(loader) % 8)
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
        (3, 4, headers, headers, headers, len(loader) + 1, len(loader) + 1, 1),  # PT_INTERP
        (1, 7, 0, 0, 0, size, size, 0x1000),  # PT_LOAD (the loader relocates the dynamic section in place)
        (2, 6, dynamic, dynamic, dynamic, size - dynamic, size - dynamic, 8),  # PT_DYNAMIC
        (0x6474E551, 6, 0, 0, 0, 0, 0, 16),  # PT_GNU_STACK
    ))
    return (elf_header + program_headers + interp + code + b"\0" * 24
            + b"".join(struct.pack("<qQ", tag, value) for tag, value in entries))


EXEC_EXIT = 42  # the exit code of every program the exec actions start


def executes(do_exec):
    """Runs do_exec, which executes a program that exits with EXEC_EXIT, in a
    child, and checks that the program ran. Where fork is refused (the
    sandbox) do_exec runs in the probe itself: had it executed anything, the
    probe would be gone, exit with EXEC_EXIT and miss its remaining lines."""
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
    if os.waitstatus_to_exitcode(status) != EXEC_EXIT:
        raise ChildProcessError("the child exited with %d, want %d" % (os.waitstatus_to_exitcode(status), EXEC_EXIT))


def connect(family, kind, address):
    import socket

    with socket.socket(family, kind) as s:
        s.settimeout(5)
        if kind == socket.SOCK_DGRAM:
            s.sendto(b"probe", address)
        else:
            s.connect(address)


# --- Forbidden actions -----------------------------------------------------


@attempt("tcp_connect")
def _():
    import socket

    connect(socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", CFG["tcp_port"]))


@attempt("tcp_bind")
def _():
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen()


@attempt("udp_send")
def _():
    import socket

    connect(socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", CFG["udp_port"]))


@attempt("unix_path_connect")
def _():
    import socket

    connect(socket.AF_UNIX, socket.SOCK_STREAM, CFG["unix_path"])


@attempt("unix_abstract_connect")
def _():
    import socket

    connect(socket.AF_UNIX, socket.SOCK_STREAM, "\0" + CFG["unix_abstract"])


@attempt("socketpair")
def _():
    import socket

    a, b = socket.socketpair()
    a.close()
    b.close()


@attempt("read_etc_passwd")
def _():
    with open("/etc/passwd") as f:
        f.read()


@attempt("list_root")
def _():
    os.listdir("/")


@attempt("list_home")
def _():
    os.listdir(CFG["home"])


@attempt("read_home_secret")
def _():
    with open(os.path.join(CFG["home"], ".ssh", "id_test")) as f:
        f.read()


@attempt("chmod_home_secret")
def _():
    os.chmod(os.path.join(CFG["home"], ".ssh", "id_test"), 0o600)


@attempt("write_script_dir")
def _():
    path = os.path.join(SCRIPT_DIR, "written-by-probe.txt")
    with open(path, "w") as f:
        f.write("x")
    os.remove(path)


@attempt("write_tmp")
def _():
    path = f"/tmp/stratbench-probe-{os.getpid()}"
    with open(path, "w") as f:
        f.write("x")
    os.remove(path)


@attempt("fork")
def _():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


@attempt("subprocess")
def _():
    import subprocess

    subprocess.run(["/bin/true"], check=True)


@attempt("thread")
def _():
    import threading

    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()


@attempt("concurrent_futures")
def _():
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(lambda: None).result()


@attempt("secret_env")
def _():
    if CFG["secret_env"] not in os.environ:
        raise LookupError("variable absent")


@attempt("alloc_700mib")
def _():
    b = bytearray(700 << 20)
    del b


@attempt("kill_parent")
def _():
    os.kill(os.getppid(), 0)


@attempt("read_parent_environ")
def _():
    with open(f"/proc/{os.getppid()}/environ", "rb") as f:
        f.read()


@attempt("renice_parent")
def _():
    ppid = os.getppid()
    os.setpriority(os.PRIO_PROCESS, ppid, os.getpriority(os.PRIO_PROCESS, ppid))


@attempt("prlimit_parent")
def _():
    import resource

    resource.prlimit(os.getppid(), resource.RLIMIT_CORE)


@attempt("ptrace_victim")
def _():
    PTRACE_SEIZE = 0x4206
    syscall(101, PTRACE_SEIZE, CFG["victim_pid"], 0, 0)


@attempt("shmget")
def _():
    IPC_PRIVATE, IPC_CREAT, IPC_RMID = 0, 0o1000, 0
    shmid = syscall(29, IPC_PRIVATE, 4096, IPC_CREAT | 0o600)
    syscall(31, shmid, IPC_RMID, 0)


@attempt("mq_open")
def _():
    name = f"/stratbench-probe-{os.getpid()}".encode()
    LIBC.mq_open.restype = ctypes.c_int
    fd = LIBC.mq_open(name, os.O_CREAT | os.O_RDWR, 0o600, None)
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    os.close(fd)
    LIBC.mq_unlink(name)


@attempt("io_uring_setup")
def _():
    params = ctypes.create_string_buffer(120)
    os.close(syscall(425, 1, ctypes.addressof(params)))


@attempt("keyctl")
def _():
    KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING = 0, -3
    syscall(250, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 1)


@attempt("memfd_create")
def _():
    os.close(os.memfd_create("probe"))


@attempt("open_2200_files")
def _():
    # Filled pipes hold kernel memory no RSS shows; the descriptor limit
    # bounds how many there can be.
    fds = []
    try:
        for _ in range(1100):
            fds.extend(os.pipe())
    finally:
        for fd in fds:
            os.close(fd)


@attempt("inotify_watch_home")
def _():
    # A watch outside the readable folders would report the names of files
    # created and removed there.
    LIBC.inotify_init1.restype = ctypes.c_int
    fd = LIBC.inotify_init1(os.O_CLOEXEC)
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    try:
        if LIBC.inotify_add_watch(fd, CFG["home"].encode(), 0x100) < 0:  # IN_CREATE
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
    finally:
        os.close(fd)


@attempt("exec_loader")
def _():
    # A file the probe may write and read but not execute, run by the loader.
    path = os.path.join(CFG["artifacts"], "escape")
    with open(path, "wb") as f:
        f.write(tiny_elf(EXEC_EXIT))
    executes(lambda: os.execv(CFG["loader"], [CFG["loader"], path]))


@attempt("exec_memfd")
def _():
    # fd 5 is a memory file, as the host's state page is: Landlock does not
    # restrict files of the internal mount memory files live on.
    page = os.pread(5, 4096, 0)
    os.pwrite(5, tiny_elf(EXEC_EXIT), 0)
    try:
        executes(lambda: os.execv("/proc/self/fd/5", ["escape"]))
    finally:
        os.pwrite(5, page, 0)


@attempt("execveat_empty_path")
def _():
    # The interpreter itself, which Landlock lets the probe execute.
    AT_EMPTY_PATH, SYS_execveat = 0x1000, 322
    fd = os.open(sys.executable, os.O_RDONLY)
    argv = (ctypes.c_char_p * 4)(sys.executable.encode(), b"-c", b"import os; os._exit(%d)" % EXEC_EXIT, None)
    envp = (ctypes.c_char_p * 1)(None)
    empty = ctypes.create_string_buffer(b"")
    try:
        executes(lambda: syscall(SYS_execveat, fd, ctypes.addressof(empty), ctypes.addressof(argv),
                                 ctypes.addressof(envp), AT_EMPTY_PATH))
    finally:
        os.close(fd)


@attempt("posix_spawn")
def _():
    pid = os.posix_spawn(sys.executable, [sys.executable, "-c", "import os; os._exit(%d)" % EXEC_EXIT], {})
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != EXEC_EXIT:
        raise ChildProcessError("the spawned program exited with %d" % os.waitstatus_to_exitcode(status))


def capabilities():
    """Effective capability set of this process (capget, version 3)."""
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)()
    syscall(125, ctypes.addressof(header), ctypes.addressof(data))
    return data[0] | data[3] << 32


caps = capabilities()
emit("capabilities", caps != 0, effective=caps)


def clone3_errno():
    """clone3(NULL, 0): EINVAL from the kernel, ENOSYS from the sandbox."""
    try:
        syscall(435, 0, 0)
    except OSError as e:
        return e.errno
    return 0


emit("clone3", True, errno=clone3_errno())


def open_fds():
    fds = []
    for fd in range(256):
        try:
            os.fstat(fd)
        except OSError:
            continue
        fds.append(fd)
    return fds


emit("fds", True, fds=open_fds())


def descriptor_limit():
    import resource

    return list(resource.getrlimit(resource.RLIMIT_NOFILE))


emit("descriptor_limit", True, limit=descriptor_limit())

# --- Allowed actions -------------------------------------------------------


@attempt("write_artifacts")
def _():
    tmp = os.path.join(CFG["artifacts"], "result.tmp")
    final = os.path.join(CFG["artifacts"], "result.txt")
    with open(tmp, "w") as f:
        f.write("probe")
    os.replace(tmp, final)
    os.makedirs(os.path.join(CFG["artifacts"], "sub"), exist_ok=True)
    with open(final) as f:
        if f.read() != "probe":
            raise ValueError("read back differs")


@attempt("private_tmp")
def _():
    import tempfile

    with tempfile.TemporaryFile() as f:
        f.write(b"probe")
        f.seek(0)
        if f.read() != b"probe":
            raise ValueError("read back differs")


@attempt("read_script")
def _():
    with open(os.path.abspath(__file__)) as f:
        f.read()


@attempt("list_script_dir")
def _():
    if os.path.basename(__file__) not in os.listdir(SCRIPT_DIR):
        raise FileNotFoundError("probe not listed")


@attempt("dev_null")
def _():
    with open(os.devnull, "w") as f:
        f.write("x")
    with open(os.devnull, "rb") as f:
        f.read()


@attempt("imports")
def _():
    import csv
    import datetime
    import decimal
    import io
    import random
    import statistics

    random.seed(1)
    xs = [random.random() for _ in range(100)]
    statistics.stdev(xs)
    decimal.Decimal("1.10") + decimal.Decimal("2.20")
    datetime.datetime.now(datetime.timezone.utc)
    csv.writer(io.StringIO()).writerow(xs[:3])
    json.dumps({"x": xs[:3]})


@attempt("ctypes_callback")
def _():
    cb = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(lambda x: x + 1)
    if cb(1) != 2:
        raise ValueError("callback result")


@attempt("sleep")
def _():
    import time

    time.sleep(0.01)


@attempt("getpid")
def _():
    if os.getpid() <= 0:
        raise ValueError(f"getpid returned {os.getpid()}")


@attempt("select")
def _():
    import select

    r, w = os.pipe()
    os.write(w, b"x")
    ready, _, _ = select.select([r], [], [], 1)
    os.close(r)
    os.close(w)
    if ready != [r]:
        raise TimeoutError("pipe not ready")


@attempt("setitimer")
def _():
    import signal
    import time

    fired = []
    signal.signal(signal.SIGALRM, lambda *_: fired.append(1))
    signal.setitimer(signal.ITIMER_REAL, 0.01)
    deadline = time.monotonic() + 2
    while not fired and time.monotonic() < deadline:
        time.sleep(0.005)
    if not fired:
        raise TimeoutError("timer did not fire")


@attempt("protocol_fds")
def _():
    # fd 3: host -> worker pipe, fd 4: worker -> host pipe, fd 5: a file.
    msg = os.read(3, 64)
    os.write(4, b"pong:" + msg)
    if os.pread(5, 5, 0) != b"page!":
        raise ValueError("fd 5 content")


# --- Last: actions that change the probe process itself --------------------


@attempt("unshare")
def _():
    CLONE_NEWUSER = 0x10000000
    syscall(272, CLONE_NEWUSER)


@attempt("execv")
def _():
    os.execv("/bin/sh", ["sh", "-c", 'echo \'{"action": "execv", "ok": true, "error": ""}\''])
