"""Attempts what the sandbox forbids, and what it allows, on the first bar;
on_finish returns {action: "ok" or the error}. Passes either way.

The home folder to try comes as a param: inside the sandbox neither $HOME nor
the password database tells it."""
import os
import socket
import subprocess
import sys
import threading

MANIFEST = {"params": {"home": "/root"}}
results = {}


def attempt(name, fn):
    try:
        fn()
        results[name] = "ok"
    except BaseException as exc:  # MemoryError, OSError, RuntimeError...
        results[name] = "%s: %s" % (type(exc).__name__, exc)


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


def on_data(ctx, history):
    if results:
        return
    for name, fn in [("tcp", tcp), ("udp", udp), ("unix", unix), ("read_etc", read_etc),
                     ("read_home", lambda: read_home(ctx)), ("write_next_to_strategy", write_next_to_strategy),
                     ("fork", fork), ("subprocess", run_subprocess), ("thread", thread),
                     ("parent_secret", parent_secret), ("allocate_700mib", allocate),
                     ("write_artifact", lambda: write_artifact(ctx)), ("read_own_folder", read_own_folder)]:
        attempt(name, fn)


def on_finish(ctx):
    return results
