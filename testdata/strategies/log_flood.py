"""Passes: prints 100 MiB on the first bar (only 64 MiB are kept)."""
import sys

LINE = "x" * 1023 + "\n"
done = False


def on_data(ctx, history):
    global done
    if not done:
        done = True
        block = LINE * 1024  # 1 MiB
        for _ in range(100):
            sys.stdout.write(block)
        sys.stdout.flush()
