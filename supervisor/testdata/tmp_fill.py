"""Fills a file in /tmp, 1 MiB at a time, reports "wrote N" (MiB) or
"enospc N" when /tmp is full, and stays.

Usage: tmp_fill.py MIB NAME"""
import errno
import os
import sys
import time

mib, name = int(sys.argv[1]), sys.argv[2]
written = 0
with open(os.path.join("/tmp", name), "wb", buffering=0) as f:
    try:
        for _ in range(mib):
            f.write(b"x" * (1 << 20))
            written += 1
        print("wrote", written, flush=True)
    except OSError as e:
        if e.errno != errno.ENOSPC:
            raise
        print("enospc", written, flush=True)
time.sleep(300)
