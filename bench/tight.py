#!/usr/bin/env python3
"""The tight in-process loop: the fastest plain Python a user would write
for backtest/testdata/sma_cross.py's strategy, to measure stratbench
against.

    python3 bench/tight.py DATA.csv [--fast 10] [--slow 30] [--cash 100000] [--json]

One symbol, in file order (bench/gen_bars.py's files). The CSV is parsed
in Python (csv.reader, float() of open, high, low, close and volume); the
closes go into a deque of the slow window; the hook is sma_cross.py's
(math.fsum of the last fast and slow closes; buy int(0.99 * cash / close)
when flat and fast > slow, sell the whole position when long and
fast < slow); an order fills at the next bar's open, a buy whose cost is
over the cash is rejected then (stratbench's fill model, no fees, no
slippage). Nothing else: no API objects, no limits, no records.

It prints the fills and the final equity (cash plus the position at the
last close), which stratbench --ci must match exactly, and the time spent
(wall and CPU, parsing included).
"""

import argparse
import collections
import csv
import itertools
import json
import math
import sys
import time


def run(path, fast, slow, cash):
    fsum, islice = math.fsum, itertools.islice
    closes = collections.deque(maxlen=slow)
    position = 0.0
    pending = 0  # qty of the order placed at the previous bar: > 0 buy, < 0 sell
    fills = rejections = 0
    close = 0.0
    with open(path, newline="") as f:
        rows = csv.reader(f)
        next(rows)
        for row in rows:
            o, _h, _l, close, _v = float(row[2]), float(row[3]), float(row[4]), float(row[5]), float(row[6])
            if pending:
                if pending > 0:
                    notional = pending * o
                    if notional + 0.0 > cash:
                        rejections += 1
                    else:
                        cash -= notional + 0.0
                        position += pending
                        fills += 1
                else:
                    cash += -pending * o - 0.0
                    position += pending
                    fills += 1
                pending = 0
            closes.append(close)
            # The hook.
            if len(closes) < slow:
                continue
            fast_ma = fsum(islice(closes, slow - fast, slow)) / fast
            slow_ma = fsum(closes) / slow
            if position == 0 and fast_ma > slow_ma:
                qty = int(0.99 * cash / close)
                if qty > 0:
                    pending = qty
            elif position > 0 and fast_ma < slow_ma:
                pending = -position
    return fills, rejections, cash, position, cash + position * close if position else cash


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data")
    ap.add_argument("--fast", type=int, default=10)
    ap.add_argument("--slow", type=int, default=30)
    ap.add_argument("--cash", type=float, default=100000.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    t0, c0 = time.perf_counter(), time.process_time()
    fills, rejections, cash, position, equity = run(args.data, args.fast, args.slow, args.cash)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    result = {"fills": fills, "rejections": rejections, "cash": cash, "position": position,
              "final_equity": equity, "wall_s": wall, "cpu_s": cpu}
    if args.json:
        json.dump(result, sys.stdout)
        print()
    else:
        for k, v in result.items():
            print("%-13s %r" % (k, v))


if __name__ == "__main__":
    main()
