#!/usr/bin/env python3
"""Writes N deterministic 1-minute bars of a random walk as stratbench CSV.

    python3 bench/gen_bars.py N OUT.csv [--symbols K] [--seed S]

The same arguments give the same file on every machine (Mersenne Twister,
random() only). Prices stay positive; high/low bracket open and close.
"""
import argparse
import datetime
import os
import random


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", type=int)
    ap.add_argument("out")
    ap.add_argument("--symbols", type=int, default=1)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    start = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
    prices = [100.0 + 10 * k for k in range(args.symbols)]
    names = ["BENCH"] if args.symbols == 1 else ["BENCH%d" % k for k in range(args.symbols)]
    # Written beside and renamed: an interrupted run never leaves a short
    # file that bench.py --keep would take for a whole one.
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        f.write("timestamp,symbol,open,high,low,close,volume\n")
        for i in range(args.n // args.symbols):
            ts = (start + datetime.timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
            for k in range(args.symbols):
                o = prices[k]
                c = max(1.0, o * (1 + (rng.random() - 0.5) * 0.004))
                h = max(o, c) * (1 + rng.random() * 0.001)
                l = min(o, c) * (1 - rng.random() * 0.001)
                v = 100 + int(rng.random() * 1000)
                f.write("%s,%s,%.4f,%.4f,%.4f,%.4f,%d\n" % (ts, names[k], o, h, l, c, v))
                prices[k] = round(c, 4)
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
