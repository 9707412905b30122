"""Writes a file from the root and from a child forked at start, and reports
how far each got: "wrote WHO N", or "efbig WHO N" when the file size limit
stopped it.

Usage: write_file.py DIR BYTES [GO]   with GO, both wait until the file GO
exists before they write."""
import errno
import os
import sys
import time

folder, size = sys.argv[1], int(sys.argv[2])
go = sys.argv[3] if len(sys.argv) > 3 else None
child = os.fork()
who = "child" if child == 0 else "root"
if child != 0:
    print("ready", flush=True)
while go and not os.path.exists(go):
    time.sleep(0.005)
written = 0
chunk = b"x" * 65536
with open(os.path.join(folder, who), "wb", buffering=0) as f:
    try:
        while written < size:
            written += f.write(chunk[: size - written])
        print("wrote", who, written, flush=True)
    except OSError as e:
        if e.errno != errno.EFBIG:
            raise
        print("efbig", who, written, flush=True)
if child == 0:
    os._exit(0)
os.waitpid(child, 0)
