# Allocates MIB mebibytes, frees them at once, then idles: a spike between
# two samples.
import sys, time

mib = int(sys.argv[1])
print("start", flush=True)
data = b"x" * (mib << 20)
del data
print("freed", flush=True)
time.sleep(300)
