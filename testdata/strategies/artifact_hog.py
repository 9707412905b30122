"""Passes: writes more into its artifacts folder than stratbench allows, and
reports what its writes did. First one file past the per-file cap; then
files of 256 KiB until the folder takes more than its cap (the param, in
bytes) as stratbench counts it: each file and the folder itself at least one
4 KiB block. The part during which the folder passed the cap may be cut
short (stratbench checks the folder from time to time); no write before may
fail. Then, without growing, it appends one byte at a time to a probe file
until a write fails because stratbench stopped every file from growing. The
failures are EFBIG ("File too large"): an OSError the strategy catches, not
a kill."""
import time

MANIFEST = {"params": {"folder_cap": 0}}
CHUNK = b"x" * (64 << 10)
BLOCK = 4096  # the least stratbench counts for a file or a folder
result = {}


def write_until_error(f, size):
    """Writes size bytes to f; returns the bytes written and the errno of the
    write that failed (None when none did)."""
    written = 0
    try:
        while written < size:
            written += f.write(CHUNK[: min(len(CHUNK), size - written)])
    except OSError as e:
        return written, e.errno
    return written, None


def on_data(ctx, history):
    if result:
        return
    with open(ctx.artifact_path("big.bin"), "wb", buffering=0) as f:
        result["big"] = write_until_error(f, 64 << 20)
    # parts: files written, the errno of a failed write (None when none
    # failed), and the bytes of every file so far, big.bin's included.
    total, parts, err = result["big"][0], 0, None
    while err is None and total + BLOCK * (parts + 2) <= ctx.params["folder_cap"]:
        with open(ctx.artifact_path("part%d.bin" % parts), "wb", buffering=0) as f:
            n, err = write_until_error(f, 256 << 10)
        total, parts = total + n, parts + 1
    result["parts"] = [parts, err, total]
    probes, err = 0, None
    deadline = time.monotonic() + 20
    with open(ctx.artifact_path("probe.bin"), "wb", buffering=0) as f:
        while err is None and time.monotonic() < deadline:
            try:
                f.write(b"p")
            except OSError as e:
                err = e.errno
            probes += 1
            time.sleep(0.01)
    result["probe"] = [probes, err]


def on_finish(ctx):
    return result
