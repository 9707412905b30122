"""Passes, leaving work for the interpreter's exit, which the worker must
do as a normal exit would: an atexit callback that writes an artifact, a
buffered file never closed, a gzip file never closed (its trailer is
written at close), a text wrapper over a gzip file, and, with the param
thread set, a thread (not a daemon) that writes its file a moment after
the run's last hook. Each file's content says it is complete. A module
global's __del__ writes teardown.txt when the interpreter's teardown runs:
it does not when the worker skips it, and does when a thread makes the
worker leave by the interpreter's own exit."""
import atexit
import gzip
import threading
import time

MANIFEST = {"params": {"thread": False}}
kept = {}


class TeardownMark:
    """Writes teardown.txt when finalised (open bound now: the teardown
    clears builtins before module globals)."""

    path = None

    def __del__(self, open=open):
        if self.path:
            with open(self.path, "w") as f:
                f.write("teardown ran\n")


mark = TeardownMark()


def on_data(ctx, history):
    if kept:
        return
    mark.path = ctx.artifact_path("teardown.txt")
    kept["buffered"] = open(ctx.artifact_path("buffered.txt"), "w")
    kept["buffered"].write("line\n" * 100)
    kept["gzip"] = gzip.open(ctx.artifact_path("binary.gz"), "wb")
    kept["gzip"].write(b"line\n" * 100)
    kept["text_gzip"] = gzip.open(ctx.artifact_path("text.gz"), "wt")
    kept["text_gzip"].write("line\n" * 100)
    path = ctx.artifact_path("atexit.txt")

    def at_exit():
        with open(path, "w") as f:
            f.write("line\n" * 100)

    atexit.register(at_exit)


def on_finish(ctx):
    if ctx.params["thread"]:
        path = ctx.artifact_path("thread.txt")

        def late():
            time.sleep(0.3)
            with open(path, "w") as f:
                f.write("line\n" * 100)

        threading.Thread(target=late).start()
    return {}
