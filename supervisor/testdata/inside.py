"""Reports, as JSON, what the program sees of its tree's init and of its own
rights."""
import json
import os

out = {"pid": os.getpid(), "ppid": os.getppid(), "uid": os.getuid(), "euid": os.geteuid()}
with open("/proc/self/status") as f:
    for line in f:
        key, _, value = line.partition(":")
        if key in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
            out[key] = int(value.strip(), 16)
for name in ("environ", "fd"):
    try:
        if name == "fd":
            os.listdir("/proc/%d/fd" % os.getppid())
        else:
            open("/proc/%d/environ" % os.getppid(), "rb").read()
        out["read_init_" + name] = "ok"
    except OSError as e:
        out["read_init_" + name] = e.strerror
# Opening another process's memory takes the rights ptrace would.
try:
    os.close(os.open("/proc/%d/mem" % os.getppid(), os.O_RDONLY))
    out["open_init_mem"] = "ok"
except OSError as e:
    out["open_init_mem"] = e.strerror
out["proc_pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print(json.dumps(out), flush=True)
