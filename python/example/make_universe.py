"""Writes universe.csv, the example data set of several symbols: synthetic
1-minute bars of eight made-up symbols over three sessions (2026-01-05 to
2026-01-07, 14:30 to 21:00 UTC), for the examples pairs.py and rotation.py.

    python3 python/example/make_universe.py > python/example/universe.csv

It is generated from a fixed seed with Python's Mersenne Twister
(random.random, whose sequence Python guarantees) and only additions,
multiplications and correctly rounded formatting, so it is the same on every
platform: a test checks the file against it. It is not market data.

Its shape: ACME and BOLT move together (BOLT is half of ACME times one plus a
spread that reverts to zero: a pair to trade); the others follow the market
and a trend of their own that changes every hour. Some bars are missing: about
3 % of each symbol's minutes at random, every symbol but ACME at 15:00 each
day, and HALO has none before 16:00 on the second day (a listing).
"""

import datetime
import random
import sys

SEED = 20260105
SYMBOLS = ("ACME", "BOLT", "CRUX", "DYNE", "EMBR", "FLUX", "GRID", "HALO")
START = {"ACME": 120.0, "CRUX": 45.0, "DYNE": 80.0, "EMBR": 15.0, "FLUX": 200.0, "GRID": 60.0, "HALO": 30.0}
DAYS = (datetime.date(2026, 1, 5), datetime.date(2026, 1, 6), datetime.date(2026, 1, 7))
OPEN = datetime.time(14, 30)
MINUTES = 390
LISTING = datetime.datetime(2026, 1, 6, 16, 0, tzinfo=datetime.timezone.utc)


def normal(rng):
    """About standard normal: the Irwin-Hall sum of four uniforms, centred and scaled."""
    return (rng.random() + rng.random() + rng.random() + rng.random() - 2.0) * 1.7320508075688772


def main(out):
    rng = random.Random(SEED)
    price = dict(START)
    drift = {s: 0.0 for s in SYMBOLS}
    spread = 0.0  # BOLT against half of ACME
    out.write("timestamp,symbol,open,high,low,close,volume\n")
    for day in DAYS:
        first = datetime.datetime.combine(day, OPEN, tzinfo=datetime.timezone.utc)
        for m in range(MINUTES):
            t = first + datetime.timedelta(minutes=m)
            market = 0.0003 * normal(rng)
            if m % 60 == 0:
                for s in SYMBOLS:
                    drift[s] = (rng.random() - 0.5) * 0.0008
            spread = spread * 0.97 + 0.0015 * normal(rng)
            bars = []
            for s in SYMBOLS:
                if s == "BOLT":
                    before = price["BOLT"] if "BOLT" in price else 0.5 * price["ACME"]
                    price["BOLT"] = 0.5 * price["ACME"] * (1.0 + spread)
                    o = before
                else:
                    o = price[s]
                    gap = 0.002 * normal(rng) if m == 0 else 0.0
                    o = o * (1.0 + gap)
                    price[s] = o * (1.0 + market + drift[s] + 0.0008 * normal(rng))
                c = price[s]
                hi = max(o, c) * (1.0 + abs(0.0004 * normal(rng)))
                lo = min(o, c) * (1.0 - abs(0.0004 * normal(rng)))
                volume = 100 + int(rng.random() * 900)
                missing = rng.random() < 0.03
                if missing or s != "ACME" and m == 30 or s == "HALO" and t < LISTING:
                    continue
                bars.append("%s,%s,%.2f,%.2f,%.2f,%.2f,%d\n" % (t.strftime("%Y-%m-%dT%H:%M:%SZ"), s, o, hi, lo, c, volume))
            out.write("".join(bars))


if __name__ == "__main__":
    main(sys.stdout)
