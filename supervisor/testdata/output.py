# Writes test output. Usage: output.py MODE
import os, sys

mode = sys.argv[1]
out = sys.stdout.buffer
if mode == "flood":  # 100 MiB of 1 KiB lines
    line = b"y" * 1023 + b"\n"
    block = line * 1024
    for _ in range(100):
        out.write(block)
    out.flush()
    sys.stderr.write("flood done\n")
elif mode == "badutf8":
    out.write(b"ok \xff\xfe end\n\xc3\n")
elif mode == "longline":  # 20 MiB in one line, then a short one
    out.write(b"\xc3\xa9" * (10 << 20) + b"\n" + b"after\n")
elif mode == "nonewline":
    out.write(b"first\r\nlast")
elif mode == "streams":
    out.write(b"to stdout\n")
    out.flush()
    sys.stderr.write("to stderr\n")
out.flush()
