"""A strategy whose orders depend on a BLAS reduction (numpy's dot of two
long vectors). OpenBLAS splits such a reduction over its thread pool, so
its last bits depend on OMP_NUM_THREADS/OPENBLAS_NUM_THREADS: a sweep that
sets them for its runs (threadEnv) but not for `--ci` gives the same run
another orders hash under the same fingerprint."""
import struct

import numpy as np

MANIFEST = {"name": "blas-threads", "params": {"k": 1}}

rng = np.random.default_rng(1)
x = rng.standard_normal(2_000_000)
y = rng.standard_normal(2_000_000)
done = False


def on_data(ctx, history):
    global done
    if done:
        return
    done = True
    v = float(np.dot(x, y))
    bits = struct.unpack("<Q", struct.pack("<d", v))[0] & 0xFFF  # the mantissa's last 12 bits
    qty = 1 + bits % 97
    print("dot", v.hex(), "qty", qty, flush=True)
    ctx.buy(ctx.symbol, qty)
