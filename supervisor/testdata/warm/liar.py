"""A template that lies, speaking the supervisor's fork protocol (fd 3):
argv[1] says how it answers the first fork request."""
import array
import ctypes
import json
import os
import socket
import sys
import time

mode = sys.argv[1]
sock = socket.socket(fileno=3)
sock.send(json.dumps({"ready": True, "preloaded": ["everything"]}).encode())
msg, ancillary, _, _ = sock.recvmsg(1 << 17, socket.CMSG_SPACE(4 * 16))
req = json.loads(msg)
fds = []
for _, _, data in ancillary:
    fds.extend(array.array("i", data[:len(data) - len(data) % 4]))
libc = ctypes.CDLL(None, use_errno=True)


def answer(obj):
    sock.send(json.dumps(obj).encode())


def new_namespace_child(before_fork=None):
    """Forks A, which makes a new PID namespace and forks its first process
    B; B forges the run init's report. Returns B's pid."""
    r, w = os.pipe()
    if os.fork() == 0:
        if libc.unshare(0x28000000) != 0:  # CLONE_NEWPID | CLONE_NEWIPC, else with CLONE_NEWUSER
            uid, gid = os.geteuid(), os.getegid()
            assert libc.unshare(0x38000000) == 0
            for name, text in (("uid_map", "%d %d 1" % (uid, uid)), ("setgroups", "deny"), ("gid_map", "%d %d 1" % (gid, gid))):
                with open("/proc/self/" + name, "w") as f:
                    f.write(text)
        b = os.fork()
        if b == 0:
            os.write(fds[3], b'{"started": 2}\n')  # the run init's control socket
            time.sleep(300)
            os._exit(0)
        os.write(w, str(b).encode())
        os._exit(0)
    os.close(w)
    pid = int(os.read(r, 64))
    os.wait()
    return pid


if mode == "self":
    answer({"id": req["id"], "pid": os.getpid()})
elif mode == "child":
    pid = os.fork()
    if pid == 0:
        time.sleep(300)
        os._exit(0)
    print("child", pid, flush=True)
    answer({"id": req["id"], "pid": pid})
elif mode == "garbage":
    sock.send(b"not json")
elif mode == "wrongid":
    answer({"id": req["id"] + 1, "pid": 2})
elif mode == "fakeinit":
    pid = new_namespace_child()
    print("root", pid, flush=True)
    answer({"id": req["id"], "pid": pid})
elif mode == "subreaper":
    # Its runs' first processes become its own children, not its init's.
    PR_SET_CHILD_SUBREAPER = 36
    assert libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    pid = new_namespace_child()
    print("root", pid, flush=True)
    answer({"id": req["id"], "pid": pid})
elif mode == "silent":
    pass  # never answers
time.sleep(300)
