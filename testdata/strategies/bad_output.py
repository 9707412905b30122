"""Passes: writes bytes that are not UTF-8 and one 20 MiB line."""
import sys

done = False


def on_data(ctx, history):
    global done
    if not done:
        done = True
        sys.stdout.buffer.write(b"bad bytes: \xff\xfe\xc3(\n")
        sys.stdout.buffer.write(b"y" * (20 << 20) + b"\n")
        sys.stdout.buffer.write(b"after the long line\n")
        sys.stdout.flush()
