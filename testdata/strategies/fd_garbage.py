"""Fails with protocol: writes garbage to every descriptor it inherited."""
import os


def on_data(ctx, history):
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd <= 2:
            continue
        try:
            os.write(fd, b"\xff\xff\xff\x00garbage")
        except OSError:
            pass
