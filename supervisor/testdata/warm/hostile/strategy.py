"""A run that goes after the template it was forked from: it looks for it
in /proc, signals everything it can name, opens its init's memory and
reports, as JSON, what it saw and what worked."""
import json
import os
import signal

out = {"pid": os.getpid(), "ppid": os.getppid(), "uid": os.getuid()}
with open("/proc/self/status") as f:
    for line in f:
        key, _, value = line.partition(":")
        if key in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
            out[key] = int(value.strip(), 16)
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
out["proc_pids"] = pids
found = []
for pid in pids:
    if pid == os.getpid():
        continue  # a copy of the template: its command line is the template's
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            if b"--template" in f.read():
                found.append(pid)
    except OSError:
        pass
out["templates_found"] = found


def tgid(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("Tgid:"):
                    return int(line.split()[1])
    except OSError:
        return None


# Every process it can name, and every process kill(-1) reaches. A thread of
# its init (the kernel drops signals to the init from inside) is no one else.
killed = []
for pid in range(2, 4096):
    if pid == os.getpid():
        continue
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        continue
    if tgid(pid) not in (1, os.getpid()):
        killed.append(pid)
out["killed"] = killed
try:
    os.kill(-1, signal.SIGKILL)
    out["kill_all"] = "ok"
except OSError as e:
    out["kill_all"] = e.strerror
try:
    os.close(os.open("/proc/%d/mem" % os.getppid(), os.O_RDONLY))
    out["open_init_mem"] = "ok"
except OSError as e:
    out["open_init_mem"] = e.strerror
# The descriptors it holds: the protocol's pipes and page, and whatever the
# template's imports opened; never the template's fork socket.
sockets = []
for fd in os.listdir("/proc/self/fd"):
    try:
        if os.readlink("/proc/self/fd/" + fd).startswith("socket:"):
            sockets.append(int(fd))
    except OSError:
        pass
out["sockets"] = sockets
print(json.dumps(out, sort_keys=True), flush=True)


def on_data(ctx, history):
    pass
