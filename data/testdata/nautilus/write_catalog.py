"""Writes the Nautilus catalog fixtures of package data with nautilus_trader itself.

    /work/nautilus-venv/bin/python data/testdata/nautilus/write_catalog.py [OUT]

nautilus_trader pins pandas 2.x, so it lives in a virtualenv of its own, not
in .venv-test: `python -m venv V && V/bin/pip install nautilus_trader==1.221.0`.
OUT (default: this script's folder) gets

  catalog/             a ParquetDataCatalog: 1-minute bars of AUD/USD.SIM
                       (price precision 5) and of SPY.XNAS (precision 2,
                       prices above 1,000), each bar type written in two
                       calls, so two files per bar type
  catalog.csv          the same bars as stratbench CSV, written from the
                       Bar objects (their ts_event and their prices and
                       volumes as Nautilus prints them): the oracle
  two_types/           a catalog with two bar types of one instrument (the
                       BID and ASK bars of AUD/USD.SIM), which stratbench
                       refuses

The bars are a deterministic random walk (random.Random(7)), so the files
are the same on every run of the same nautilus_trader and pyarrow.
"""

import os
import random
import shutil
import sys

from nautilus_trader.model.data import Bar, BarType
from nautilus_trader.model.objects import Price, Quantity
from nautilus_trader.persistence.catalog import ParquetDataCatalog

START = 1_767_623_400_000_000_000  # 2026-01-05T14:30:00Z
MINUTE = 60_000_000_000


def walk(rng, bar_type, n, price, precision, size_precision, step):
    bars = []
    fmt = "%." + str(precision) + "f"
    for i in range(n):
        o = price
        c = max(step, round(o + rng.choice([-3, -2, -1, 0, 1, 2, 3]) * step, precision))
        h = round(max(o, c) + rng.randint(0, 4) * step, precision)
        lo = round(min(o, c) - rng.randint(0, 4) * step, precision)
        vol = rng.randint(0, 5000) if size_precision == 0 else rng.randint(0, 500000) / 10**size_precision
        vfmt = "%." + str(size_precision) + "f"
        ts = START + i * MINUTE
        bars.append(Bar(bar_type, Price.from_str(fmt % o), Price.from_str(fmt % h), Price.from_str(fmt % lo),
                        Price.from_str(fmt % c), Quantity.from_str(vfmt % vol), ts, ts))
        price = c
    return bars


def iso(ns):
    import datetime
    secs, frac = divmod(ns, 1_000_000_000)
    dt = datetime.datetime.fromtimestamp(secs, datetime.timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + ".%09dZ" % frac


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    rng = random.Random(7)
    aud = BarType.from_str("AUD/USD.SIM-1-MINUTE-BID-EXTERNAL")
    spy = BarType.from_str("SPY.XNAS-1-MINUTE-LAST-EXTERNAL")
    aud_bars = walk(rng, aud, 300, 0.71, 5, 0, 0.00001)
    spy_bars = walk(rng, spy, 300, 1234.56, 2, 1, 0.01)

    cat_dir = os.path.join(out, "catalog")
    shutil.rmtree(cat_dir, ignore_errors=True)
    cat = ParquetDataCatalog(cat_dir)
    for bars in (aud_bars, spy_bars):
        cat.write_data(bars[:120])
        cat.write_data(bars[120:])
    rows = []
    for bars in (aud_bars, spy_bars):
        for b in bars:
            rows.append((b.ts_event, str(b.bar_type.instrument_id), str(b.open), str(b.high), str(b.low),
                         str(b.close), str(b.volume)))
    rows.sort()
    with open(os.path.join(out, "catalog.csv"), "w") as f:
        f.write("timestamp,symbol,open,high,low,close,volume\n")
        for r in rows:
            f.write(",".join([iso(r[0])] + list(r[1:])) + "\n")

    two = os.path.join(out, "two_types")
    shutil.rmtree(two, ignore_errors=True)
    cat2 = ParquetDataCatalog(two)
    ask = BarType.from_str("AUD/USD.SIM-1-MINUTE-ASK-EXTERNAL")
    cat2.write_data(aud_bars[:10])
    cat2.write_data([Bar(ask, b.open, b.high, b.low, b.close, b.volume, b.ts_event, b.ts_init) for b in aud_bars[:10]])


if __name__ == "__main__":
    main()
