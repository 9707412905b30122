"""Fails with protocol: writes garbage to every descriptor it inherited."""
import os


def on_data(ctx, history):
    for fd in range(3, 256):
        try:
            os.write(fd, b"\xff\xff\xff\x00garbage")
        except OSError:
            pass
