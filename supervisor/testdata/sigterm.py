# Root and child ignore SIGTERM (and SIGINT, SIGHUP).
import os, signal, time

for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)
if os.fork() == 0:
    time.sleep(300)
    os._exit(0)
print("ready", flush=True)
time.sleep(300)
