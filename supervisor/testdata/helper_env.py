"""Starts a helper with an environment of its own, whose supervisor marker
names no tree, and the helper daemonizes (double fork, setsid).

Usage: helper_env.py [exit FILE]   with "exit" the root exits once FILE exists."""
import os
import subprocess
import sys
import time

if sys.argv[1:2] == ["helper"]:
    r, w = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            print("escapee", os.getpid(), flush=True)
            os.write(w, b"x")
            time.sleep(300)
            os._exit(0)
        os._exit(0)
    os.read(r, 1)
    os._exit(0)

env = {"STRATBENCH_SUPERVISOR_TREE": "1.2.3", "PATH": "/usr/bin:/bin"}
subprocess.run([sys.executable, os.path.abspath(__file__), "helper"], env=env, check=True)
print("ready", flush=True)
if sys.argv[1:2] == ["exit"]:
    while not os.path.exists(sys.argv[2]):
        time.sleep(0.005)
    sys.exit(0)
time.sleep(300)
