"""Writes into the folder DIR what a strategy may leave in its artifacts:
a file, a sparse file of 100 MiB holding 4 KiB, 50 more names of the first
file, nested folders, a symbolic link and a FIFO (not copied out), then a
file until the folder is full ("enospc N": N MiB written). Says "listed"
with what the folder holds as this process sees it, and exits.

Usage: capped_fill.py DIR"""
import errno
import os
import sys

d = sys.argv[1]
print("seen at start:", sorted(os.listdir(d)), flush=True)
with open(os.path.join(d, "a.bin"), "wb") as f:
    f.write(b"a" * (1 << 20))
with open(os.path.join(d, "sparse.bin"), "wb") as f:
    f.seek(100 << 20)
    f.write(b"s" * 4096)
for i in range(50):
    os.link(os.path.join(d, "a.bin"), os.path.join(d, "a.%d" % i))
os.makedirs(os.path.join(d, "x", "y"))
with open(os.path.join(d, "x", "y", "z.txt"), "w") as f:
    f.write("deep\n")
os.symlink("/etc/passwd", os.path.join(d, "link"))
os.mkfifo(os.path.join(d, "fifo"))
written = 0
with open(os.path.join(d, "fill.bin"), "wb", buffering=0) as f:
    try:
        while True:
            f.write(b"f" * (1 << 20))
            written += 1
    except OSError as e:
        if e.errno != errno.ENOSPC:
            raise
print("enospc", written, flush=True)
