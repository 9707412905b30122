"""Probes the temporary folder on the first bar: its size (os.statvfs), where
TMPDIR and tempfile point, whether a file of the host's /tmp (the host_file
param) can be read, then writes fill_mib MiB to a tempfile with plain
os.write and records where it stopped. With the hold param it then prints
"holding" and waits (within the hook's limit) until that file exists, so
that a test can look at the machine while the file is held. on_finish
returns what it found."""
import errno
import os
import tempfile
import time

MANIFEST = {"params": {"fill_mib": 300, "host_file": "", "hold": ""}}
found = {}


def on_data(ctx, history):
    if found:
        return
    st = os.statvfs("/tmp")
    found["tmp_bytes"] = st.f_frsize * st.f_blocks
    found["tmpdir"] = os.environ.get("TMPDIR")
    found["tempdir"] = tempfile.gettempdir()
    if ctx.params["host_file"]:
        try:
            open(ctx.params["host_file"]).close()
            found["host_file"] = "ok"
        except OSError as exc:
            found["host_file"] = type(exc).__name__
    fd, path = tempfile.mkstemp()
    found["path"] = path
    chunk = b"x" * (1 << 20)
    wrote = 0
    found["enospc"] = False
    try:
        for _ in range(ctx.params["fill_mib"]):
            wrote += os.write(fd, chunk)
    except OSError as exc:
        found["enospc"] = exc.errno == errno.ENOSPC
        found["error"] = str(exc)
    found["wrote_bytes"] = wrote
    if ctx.params["hold"]:
        print("holding", path, flush=True)
        deadline = time.monotonic() + 4
        while not os.path.exists(ctx.params["hold"]):
            if time.monotonic() > deadline:
                raise TimeoutError("nobody created " + ctx.params["hold"])
            time.sleep(0.01)
    os.close(fd)


def on_finish(ctx):
    return found
