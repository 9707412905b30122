"""What names an attack's objects outside the job folder, so that the harness
finds them after the run (and removes them): the job's id, and a System V
key derived from it (CRC-32, 31 bits), as attack_test.go computes them."""
import os
import zlib


def job_id(ctx):
    return os.path.basename(os.path.dirname(os.path.dirname(ctx.artifact_path("x"))))


def sysv_key(ctx):
    return zlib.crc32(job_id(ctx).encode()) & 0x7FFFFFFF
