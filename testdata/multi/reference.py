"""The examples python/example/pairs.py and rotation.py computed again
without stratbench: plain Python over the CSV, with its own market (the fill
model of docs/fills-and-metrics.md) and its own copy of each strategy's rule.
The test compares its fills and final equity with a stratbench run's.

    python3 reference.py pairs|rotation DATA.csv FEE_BPS [key=value ...]

prints {"fills": [[time, symbol, side, qty, price, fee], ...], "final_equity": x,
"rejections": n, "calls": timestamps}.
"""

import csv
import json
import math
import sys
from collections import deque


def read(path):
    """The bars by timestamp: [(time, {symbol: (open, high, low, close)})], in time order."""
    times = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            t = row["timestamp"]
            if not times or times[-1][0] != t:
                times.append((t, {}))
            times[-1][1][row["symbol"]] = tuple(float(row[k]) for k in ("open", "high", "low", "close"))
    return times


class Market:
    """Market orders only: an order fills at the open of its symbol's next
    bar after the one it was placed at; the orders a timestamp fills fill in
    the order they were placed. A buy costing more than the cash is
    rejected; so is a sell beyond the position without short selling."""

    def __init__(self, symbols, cash, fee_bps, allow_short):
        self.symbols = symbols
        self.cash = cash
        self.fee_bps = fee_bps
        self.allow_short = allow_short
        self.position = {s: 0.0 for s in symbols}
        self.last_close = {s: 0.0 for s in symbols}
        self.orders = []  # [id, symbol, buy, qty, placed time]
        self.next_id = 1
        self.fills = []
        self.rejections = 0

    def order(self, symbol, buy, qty, now):
        oid = self.next_id
        self.next_id += 1
        self.orders.append([oid, symbol, buy, qty, now])
        return oid

    def match(self, t, bars):
        """Fills the orders bars fill; returns the executions (id, symbol, status)."""
        due = [o for o in self.orders if o[1] in bars and o[4] < t]
        self.orders = [o for o in self.orders if not (o[1] in bars and o[4] < t)]
        out = []
        for oid, sym, buy, qty, _ in sorted(due):
            price = bars[sym][0]
            notional = qty * price
            fee = abs(notional) * self.fee_bps / 10000
            if buy:
                if notional + fee > self.cash:
                    self.rejections += 1
                    out.append((oid, sym, "rejected"))
                    continue
                self.cash -= notional + fee
                self.position[sym] += qty
            else:
                if not self.allow_short and qty > self.position[sym] * (1 + 1e-9):
                    self.rejections += 1
                    out.append((oid, sym, "rejected"))
                    continue
                self.cash += notional - fee
                self.position[sym] -= qty
            self.fills.append([t, sym, "buy" if buy else "sell", qty, price, fee])
            out.append((oid, sym, "filled"))
        return out

    def mark(self, bars):
        for sym, bar in bars.items():
            self.last_close[sym] = bar[3]

    def equity(self):
        eq = self.cash
        for s in self.symbols:
            if self.position[s] != 0:
                eq += self.position[s] * self.last_close[s]
        return eq


def pairs(times, symbols, market, params):
    a, b = params.get("a", "ACME"), params.get("b", "BOLT")
    window, entry, exit_ = int(params.get("window", 60)), float(params.get("entry", 2.0)), float(params.get("exit", 0.5))
    notional = float(params.get("notional", 20000.0))
    spreads = deque(maxlen=window)
    pending = set()
    holding = 0
    for t, bars in times:
        for oid, _, _ in market.match(t, bars):
            pending.discard(oid)
        market.mark(bars)
        if a not in bars or b not in bars:
            continue
        pa, pb = bars[a][3], bars[b][3]
        spreads.append(math.log(pa / pb))
        if len(spreads) < window or pending:
            continue
        n = len(spreads)
        mean = sum(spreads) / n
        std = math.sqrt(sum((x - mean) ** 2 for x in spreads) / (n - 1))
        if std == 0:
            continue
        z = (spreads[-1] - mean) / std
        if holding == 0 and abs(z) > entry:
            qa, qb = int(notional / pa), int(notional / pb)
            if z > 0:
                pending.update((market.order(a, False, qa, t), market.order(b, True, qb, t)))
                holding = -1
            else:
                pending.update((market.order(a, True, qa, t), market.order(b, False, qb, t)))
                holding = 1
        elif holding != 0 and abs(z) < exit_:
            for sym in (a, b):
                qty = market.position[sym]
                if qty > 0:
                    pending.add(market.order(sym, False, qty, t))
                elif qty < 0:
                    pending.add(market.order(sym, True, -qty, t))
            holding = 0


def rotation(times, symbols, market, params):
    lookback, every, top = int(params.get("lookback", 60)), int(params.get("every", 30)), int(params.get("top", 3))
    notional = float(params.get("notional", 15000.0))
    rows = []  # per timestamp: {symbol: close}
    pending = {}
    for calls, (t, bars) in enumerate(times, 1):
        for _, sym, _ in market.match(t, bars):
            pending[sym] = 0
        market.mark(bars)
        rows.append({s: bar[3] for s, bar in bars.items()})
        if calls % every or len(rows) <= lookback:
            continue
        first, last = rows[-lookback - 1], rows[-1]
        momentum = {k: last[s] / first[s] - 1.0 for k, s in enumerate(symbols) if s in first and s in last}
        ranked = sorted(momentum, key=lambda k: (-momentum[k], k))
        best = set(ranked[:top])
        for k, sym in enumerate(symbols):
            if k not in best and market.position[sym] > 0 and not pending.get(sym):
                market.order(sym, False, market.position[sym], t)
                pending[sym] = 1
        for k in sorted(best):
            sym = symbols[k]
            if market.position[sym] == 0 and not pending.get(sym):
                qty = int(notional / last[sym])
                if qty > 0:
                    market.order(sym, True, qty, t)
                    pending[sym] = 1


def main():
    name, path, fee_bps = sys.argv[1], sys.argv[2], float(sys.argv[3])
    params = dict(kv.split("=", 1) for kv in sys.argv[4:])
    times = read(path)
    symbols = sorted({s for _, bars in times for s in bars})
    market = Market(symbols, 100000.0, fee_bps, allow_short=(name == "pairs"))
    {"pairs": pairs, "rotation": rotation}[name](times, symbols, market, params)
    print(json.dumps({"fills": market.fills, "final_equity": market.equity(), "rejections": market.rejections,
                      "calls": len(times)}))


if __name__ == "__main__":
    main()
