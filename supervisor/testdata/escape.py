# A setsid + double-fork escapee. The grandchild leaves the session and the
# process group, is orphaned (its parent exits) and keeps stdout open.
# Usage: escape.py [exit]   with "exit" the root exits once the escapee runs
# and the test has sent it SIGUSR1 (after finding the escapee, which the
# root's exit would otherwise race with: the tree dies with its root).
import os, signal, sys, time

r, w = os.pipe()
child = os.fork()
if child == 0:
    os.setsid()
    if os.fork() == 0:
        os.close(r)
        print("escapee", os.getpid(), flush=True)
        os.write(w, b"x")
        time.sleep(300)
        os._exit(0)
    os._exit(0)
os.close(w)
os.waitpid(child, 0)
os.read(r, 1)
if sys.argv[1:] == ["exit"]:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
print("root", os.getpid(), flush=True)
if sys.argv[1:] == ["exit"]:
    signal.sigwait({signal.SIGUSR1})
    sys.exit(0)
time.sleep(300)
