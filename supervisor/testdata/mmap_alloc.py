# Maps GIB gibibytes with MAP_POPULATE in one call: anonymous memory, or the
# pages of an existing tmpfs file (far faster to map than to fault in).
# Usage: mmap_alloc.py GIB [FILE]
import mmap, os, sys

size = int(float(sys.argv[1]) * (1 << 30))
print("mapping", flush=True)
if len(sys.argv) > 2:
    fd = os.open(sys.argv[2], os.O_RDWR)
    m = mmap.mmap(fd, size, flags=mmap.MAP_SHARED | mmap.MAP_POPULATE)
else:
    m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE)
print("mapped", flush=True)
