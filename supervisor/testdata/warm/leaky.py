"""A template that forks its one run as the fork protocol says (fd 3), but
leaves the run's init every descriptor it should not have: all that came
with the request (the run's stdout and stderr, stratbench's executable, the
go pipe, the extra files) and pipes of its own, open and inheritable across
the exec of the run init. It prints their numbers ("leaving 4,5,..."). The
run's program waits for the host's go, says so and sleeps."""
import array
import ctypes
import json
import os
import socket
import time

sock = socket.socket(fileno=3)
sock.send(json.dumps({"ready": True, "preloaded": []}).encode())
msg, ancillary, _, _ = sock.recvmsg(1 << 17, socket.CMSG_SPACE(4 * 16))
req = json.loads(msg)
fds = []
for _, _, data in ancillary:
    fds.extend(array.array("i", data[:len(data) - len(data) % 4]))
stdout, stderr, exe, ctl, go = fds[:5]
libc = ctypes.CDLL(None, use_errno=True)


def new_pid_namespace():
    if libc.unshare(0x28000000) == 0:  # CLONE_NEWPID | CLONE_NEWIPC
        return
    uid, gid = os.geteuid(), os.getegid()
    assert libc.unshare(0x38000000) == 0  # and CLONE_NEWUSER
    for name, text in (("uid_map", "%d %d 1" % (uid, uid)), ("setgroups", "deny"), ("gid_map", "%d %d 1" % (gid, gid))):
        with open("/proc/self/" + name, "w") as f:
            f.write(text)


def drop_capabilities():
    class CapHeader(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL
    assert libc.capset(ctypes.byref(CapHeader(0x20080522, 0)), ctypes.byref((ctypes.c_uint32 * 6)())) == 0


r, w = os.pipe()
if os.fork() == 0:  # A
    new_pid_namespace()
    b = os.fork()
    if b == 0:  # B, the namespace's first process
        sync_r, sync_w = os.pipe()
        c = os.fork()
        if c == 0:  # C, the run's program
            os.setsid()
            if os.geteuid() != 0:
                drop_capabilities()
            os.dup2(stdout, 1)
            os.close(sync_w)
            if os.read(go, 1) != b"\x01":
                os._exit(1)
            print("program running", flush=True)
            time.sleep(300)
            os._exit(0)
        os.close(sync_w)
        os.read(sync_r, 1)  # C is set up
        os.dup2(ctl, 3)  # the run init's control socket, where it expects it
        leaving = sorted({fd for fd in fds if fd != 3} | {sync_r, r, w})
        for fd in leaving:
            os.set_inheritable(fd, True)
        print("leaving " + ",".join(str(fd) for fd in leaving if fd > 3), flush=True)
        os.dup2(os.open(os.devnull, os.O_RDWR), 0)
        os.dup2(stdout, 1)
        os.dup2(stderr, 2)
        os.execve(exe, req["init"] + [str(c)], dict(kv.split("=", 1) for kv in req["env"]))
    os.write(w, str(b).encode())
    os._exit(0)
os.close(w)
pid = int(os.read(r, 64))
os.wait()
sock.send(json.dumps({"id": req["id"], "pid": pid}).encode())
sock.recv(1)  # the host closes the socket
