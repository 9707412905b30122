# A grandchild allocates MIB mebibytes (touched, so resident) and keeps them.
import os, sys, time

mib = int(sys.argv[1])
if os.fork() == 0:
    if os.fork() == 0:
        data = b"x" * (mib << 20)
        print("allocated", flush=True)
        time.sleep(300)
        os._exit(0)
    time.sleep(300)
    os._exit(0)
time.sleep(300)
