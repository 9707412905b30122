#!/usr/bin/env python3
"""The in-process floor: a plain Python backtest loop to measure stratbench against.

    python3 bench/floor.py STRATEGY.py DATA.csv [--cash C] [--fee-bps F]
        [--slippage-bps S] [--allow-short] [--param k=v]... [--json] [--executions]

It imports the strategy, reads the CSV, replays the bars in time order and
calls on_data(ctx, history), on_execution(ctx, execution) and on_finish(ctx)
in this process, with the strategy API of README "Writing a strategy". Orders are
filled with stratbench's fill model (backtest/doc.go), written here again
independently in plain Python, so the two can check each other: the
backtest package's tests compare their fills and final equity.

Being the floor, it does no more per bar than the API needs: no limits, no
supervision, no metrics. Standard library only.

Fill model, in short: a market order placed during event t fills at the open
of the first bar of its symbol with a later timestamp, times (1 + slippage)
for buys and (1 - slippage) for sells. A limit buy fills on the first such bar
whose low is at or below the limit, at min(open, limit); a limit sell when the
high is at or above the limit, at max(open, limit). fee = |qty * price| *
fee_bps / 10000. A buy whose cost plus fee exceeds the cash, and a sell of
more than the position (unless --allow-short), are rejected when they would
fill. Bad orders (unknown symbol, qty or limit not a finite number > 0) are
rejected when placed, and cancels answered, at the start of the next bar,
before its fills. Executions reach on_execution before the bar's on_data.
"""

import argparse
import collections
import csv
import datetime
import decimal
import importlib.util
import json
import math
import os
import sys
import tempfile
import time

UTC = datetime.timezone.utc
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)
UNIX_MILLIS_THRESHOLD = 100_000_000_000  # integer part at or above: milliseconds
COLUMNS = ("timestamp", "symbol", "open", "high", "low", "close", "volume")


def go_float(x):
    """Format x as Go's strconv.FormatFloat(x, 'f', -1, 64): shortest, no exponent."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    s = format(decimal.Decimal(repr(x)), "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


# Fractional quantities do not add up exactly in binary floating point: a
# position within this relative distance of zero is zero, and a sell that
# exceeds the position by less than this is allowed (backtest/doc.go).
QTY_EPSILON = 1e-9


def snap_zero(pos, qty):
    return 0.0 if abs(pos) <= QTY_EPSILON * qty else pos


def to_ns(text):
    """Unix nanoseconds of an RFC 3339, 'YYYY-MM-DD HH:MM:SS' or unix s/ms timestamp."""
    if text.isdigit():
        v = int(text)
        return v * 1_000_000 if v >= UNIX_MILLIS_THRESHOLD else v * 1_000_000_000
    if len(text) >= 10 and text[4] == "-":
        iso = text.replace("t", "T")
        if iso[-1:] in ("Z", "z"):
            iso = iso[:-1] + "+00:00"  # before Python 3.11, fromisoformat takes no Z
        dt = datetime.datetime.fromisoformat(iso)
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)
        delta = dt - EPOCH
        ns = (delta.days * 86400 + delta.seconds) * 1_000_000_000
        dot = text.find(".")
        if dot < 0:
            return ns
        digits = ""
        for ch in text[dot + 1:]:
            if not ch.isdigit():
                break
            digits += ch
        return ns + int((digits + "000000000")[:9])
    whole, _, frac = text.lstrip("+-").partition(".")
    sign = -1 if text.startswith("-") else 1
    if int(whole) >= UNIX_MILLIS_THRESHOLD:
        unit, digits = 1_000_000, 6
    else:
        unit, digits = 1_000_000_000, 9
    return sign * (int(whole) * unit + int((frac + "0" * digits)[:digits] or "0") * (unit // 10 ** digits))


def read_bars(path):
    """Columns of the bars in replay order: time, then first appearance of the symbol."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = csv.reader(f)
        header = [h.strip().lower() for h in next(rows)]
        ti, si, oi, hi, li, ci, vi = (header.index(c) for c in COLUMNS)
        times, syms, opens, highs, lows, closes, vols = [], [], [], [], [], [], []
        add_t, add_s, add_o, add_h, add_l, add_c, add_v = (
            times.append, syms.append, opens.append, highs.append, lows.append, closes.append, vols.append)
        symbols, sym_index, last_time = [], {}, []
        prev_text, t, prev_t, prev_s = None, 0, -1 << 63, -1
        ordered = True
        line = 1
        for row in rows:
            line += 1
            if not row:
                continue
            text = row[ti]
            if text != prev_text:
                prev_text, t = text, to_ns(text.strip())
            name = row[si].strip()
            s = sym_index.get(name)
            if s is None:
                s = sym_index[name] = len(symbols)
                symbols.append(name)
                last_time.append(t - 1)
            if t <= last_time[s]:
                sys.exit(f"floor: {path} line {line}: {name} rows out of time order")
            last_time[s] = t
            if t < prev_t or (t == prev_t and s < prev_s):
                ordered = False
            prev_t, prev_s = t, s
            add_t(t)
            add_s(s)
            add_o(float(row[oi]))
            add_h(float(row[hi]))
            add_l(float(row[li]))
            add_c(float(row[ci]))
            add_v(float(row[vi]))
    if not ordered:
        keys = list(zip(times, syms))
        order = sorted(range(len(keys)), key=keys.__getitem__)
        times, syms, opens, highs, lows, closes, vols = (
            [col[i] for i in order] for col in (times, syms, opens, highs, lows, closes, vols))
    return symbols, times, syms, opens, highs, lows, closes, vols


def ns_to_datetime(ns):
    return EPOCH + datetime.timedelta(microseconds=ns // 1000)


Bar = collections.namedtuple("Bar", "time open high low close volume")


class TimeColumn:
    """history.time: a read-only view of the times as timezone-aware UTC datetimes."""

    __slots__ = ("_ns",)

    def __init__(self, ns):
        self._ns = ns

    def __len__(self):
        return len(self._ns)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [ns_to_datetime(x) for x in self._ns[k]]
        return ns_to_datetime(self._ns[k])

    def __iter__(self):
        return (ns_to_datetime(x) for x in self._ns)


class History:
    """The recent bars of one symbol, oldest first, the current bar last.

    The price and volume columns are plain lists of the last len(history)
    values, so that slicing them costs no more than it can.
    """

    __slots__ = ("_cap", "_ns", "time", "open", "high", "low", "close", "volume")

    def __init__(self, cap):
        self._cap = cap
        self._ns = []
        self.time = TimeColumn(self._ns)
        self.open, self.high, self.low, self.close, self.volume = [], [], [], [], []

    def push(self, t, o, h, l, c, v):
        ns = self._ns
        ns.append(t)
        self.open.append(o)
        self.high.append(h)
        self.low.append(l)
        self.close.append(c)
        self.volume.append(v)
        if len(ns) > self._cap:
            del ns[0], self.open[0], self.high[0], self.low[0], self.close[0], self.volume[0]

    def __len__(self):
        return len(self._ns)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self._ns)))]
        return Bar(ns_to_datetime(self._ns[k]), self.open[k], self.high[k], self.low[k], self.close[k], self.volume[k])


Execution = collections.namedtuple(
    "Execution", "order_id symbol side qty price fee status reason time event cash position")


class Order:
    __slots__ = ("id", "symbol", "buy", "qty", "limit", "placed", "status")


class Market:
    """The fill model and the portfolio, and the ctx the strategy sees."""

    def __init__(self, symbols, cols, cash, fee_bps, slippage_bps, allow_short, params, artifacts, history):
        self.symbols = symbols
        self.sym_index = {s: i for i, s in enumerate(symbols)}
        self.times, self.syms, self.opens, self.highs, self.lows, self.closes, self.vols = cols
        self.cash = cash
        self.position = [0] * len(symbols)
        self.fee_bps = fee_bps
        self.buy_factor = 1 + slippage_bps / 10000
        self.sell_factor = 1 - slippage_bps / 10000
        self.allow_short = allow_short
        self.open_orders = [[] for _ in symbols]
        self.orders = {}
        self.queue = collections.deque()
        self.executions = []
        self.fills = 0
        self.rejections = 0
        self.event = 0
        self.histories = [History(history) for _ in symbols]
        self.last_close = [0.0] * len(symbols)
        self.last_index = [-1] * len(symbols)  # event of each symbol's latest bar
        # What the strategy sees of the portfolio: updated from each delivered
        # execution, as the bridge does.
        self.view_cash = cash
        self.view_position = {}
        self.ctx = Context(self, params, artifacts)

    # Orders placed by the strategy.

    def place(self, symbol, qty, limit, buy):
        o = Order()
        o.id = len(self.orders) + 1
        o.symbol, o.buy, o.qty, o.limit = symbol, buy, qty, limit
        o.placed = self.times[self.event]
        o.status = ""
        self.orders[o.id] = o
        s = self.sym_index.get(symbol)
        reason = ""
        if s is None:
            reason = "unknown symbol " + json.dumps(symbol)
        elif not (isinstance(qty, (int, float)) and math.isfinite(qty) and qty > 0):
            reason = "invalid qty " + go_float(float(qty)) + ": must be a finite number > 0"
        elif limit is not None and not (math.isfinite(limit) and limit > 0):
            reason = "invalid limit price " + go_float(float(limit)) + ": must be a finite number > 0"
        if reason:
            o.status = "rejected"
            self.rejections += 1
            self.emit(o, 0.0, 0.0, "rejected", reason, self.event)
        else:
            self.open_orders[s].append(o)
        return o.id

    def cancel(self, order_id):
        o = self.orders.get(order_id)
        ev = self.event
        if o is None:
            self.rejections += 1
            x = Execution(order_id, "", "", 0.0, 0.0, 0.0, "rejected", f"cancel: no order {order_id}",
                          self.times[ev], ev, self.cash, 0.0)
            self.queue.append(x)
            self.executions.append(x)
            return
        if o.status:
            self.rejections += 1
            self.emit(o, 0.0, 0.0, "rejected", f"cancel: order {order_id} already {o.status}", ev)
            return
        self.open_orders[self.sym_index[o.symbol]].remove(o)
        o.status = "canceled"
        self.emit(o, 0.0, 0.0, "canceled", "", ev)

    def emit(self, o, price, fee, status, reason, event):
        s = self.sym_index.get(o.symbol)
        x = Execution(o.id, o.symbol, "buy" if o.buy else "sell", o.qty, price, fee, status, reason,
                      self.times[event], event, self.cash, self.position[s] if s is not None else 0.0)
        self.queue.append(x)
        self.executions.append(x)

    # The market.

    def match(self, i):
        """Fill or reject the open orders of bar i's symbol that it trades through."""
        s = self.syms[i]
        book = self.open_orders[s]
        t, op = self.times[i], self.opens[i]
        kept = []
        for o in book:
            if o.placed >= t:
                kept.append(o)
                continue
            if o.limit is None:
                price = op * (self.buy_factor if o.buy else self.sell_factor)
            elif o.buy and self.lows[i] <= o.limit:
                price = min(op, o.limit)
            elif not o.buy and self.highs[i] >= o.limit:
                price = max(op, o.limit)
            else:
                kept.append(o)
                continue
            notional = o.qty * price
            fee = abs(notional) * self.fee_bps / 10000
            if o.buy:
                cost = notional + fee
                if cost > self.cash:
                    o.status = "rejected"
                    self.rejections += 1
                    self.emit(o, 0.0, 0.0, "rejected", f"insufficient cash: need {go_float(cost)}, have {go_float(self.cash)}", i)
                    continue
                self.cash -= notional + fee
                self.position[s] = snap_zero(self.position[s] + o.qty, o.qty)
            else:
                if not self.allow_short and o.qty > self.position[s] * (1 + QTY_EPSILON):
                    o.status = "rejected"
                    self.rejections += 1
                    self.emit(o, 0.0, 0.0, "rejected",
                              f"insufficient position: selling {go_float(float(o.qty))}, holding {go_float(float(self.position[s]))}"
                              " (short selling needs --allow-short)", i)
                    continue
                self.cash += notional - fee
                self.position[s] = snap_zero(self.position[s] - o.qty, o.qty)
            o.status = "filled"
            self.fills += 1
            self.emit(o, price, fee, "filled", "", i)
        self.open_orders[s] = kept

    def deliver(self, on_execution):
        queue = self.queue
        while queue:
            x = queue.popleft()
            self.view_cash = x.cash
            if x.symbol:
                self.view_position[x.symbol] = x.position
            if on_execution is not None:
                # As in the bridge: ctx.symbol and ctx.bar are the execution's
                # symbol and the last bar of it the strategy has seen.
                ctx = self.ctx
                ctx._now = x.time
                s = self.sym_index.get(x.symbol)
                if s is not None:
                    ctx.symbol, ctx._i = x.symbol, self.last_index[s]
                on_execution(ctx, x)

    def run(self, module):
        on_data = module.on_data
        on_execution = getattr(module, "on_execution", None)
        on_finish = getattr(module, "on_finish", None)
        ctx = self.ctx
        times, syms, opens, highs, lows, closes, vols = (
            self.times, self.syms, self.opens, self.highs, self.lows, self.closes, self.vols)
        symbols, histories, last_close, open_orders = self.symbols, self.histories, self.last_close, self.open_orders
        last_index = self.last_index
        queue, match, deliver = self.queue, self.match, self.deliver
        for i in range(len(times)):
            s = syms[i]
            self.event = i
            if open_orders[s]:
                match(i)
            if queue:
                deliver(on_execution)
            c = closes[i]
            last_close[s] = c
            last_index[s] = i
            h = histories[s]
            h.push(times[i], opens[i], highs[i], lows[i], c, vols[i])
            ctx._now = times[i]
            ctx._i = i
            ctx.symbol = symbols[s]
            on_data(ctx, h)
        if queue:
            deliver(on_execution)
        if on_finish is not None:
            return on_finish(ctx)
        return None

    def equity(self):
        eq = self.cash
        for s, p in enumerate(self.position):
            if p != 0:
                eq += p * self.last_close[s]
        return eq


class Context:
    """ctx of README "Writing a strategy"."""

    __slots__ = ("_m", "_now", "_i", "_bar", "_bar_i", "symbol", "params", "_artifacts")

    def __init__(self, market, params, artifacts):
        self._m = market
        self._now = 0
        self._i = 0
        self._bar = None
        self._bar_i = -1
        self.symbol = None
        self.params = params
        self._artifacts = artifacts

    @property
    def time(self):
        return ns_to_datetime(self._now)

    @property
    def bar(self):
        m, i = self._m, self._i
        if i < 0:
            return None
        if self._bar_i != i:
            self._bar = Bar(ns_to_datetime(m.times[i]), m.opens[i], m.highs[i], m.lows[i], m.closes[i], m.vols[i])
            self._bar_i = i
        return self._bar

    @property
    def cash(self):
        return self._m.view_cash

    @property
    def equity(self):
        m = self._m
        eq = m.view_cash
        for sym, p in m.view_position.items():
            if p != 0:
                eq += p * m.last_close[m.sym_index[sym]]
        return eq

    def position(self, symbol):
        return self._m.view_position.get(symbol, 0)

    def buy(self, symbol, qty, limit=None):
        return self._m.place(symbol, qty, limit, True)

    def sell(self, symbol, qty, limit=None):
        return self._m.place(symbol, qty, limit, False)

    def cancel(self, order_id):
        self._m.cancel(order_id)

    def artifact_path(self, name):
        if os.path.basename(name) != name or name in ("", ".", ".."):
            raise ValueError(f"artifact name must be a plain file name: {name!r}")
        return os.path.join(self._artifacts, name)


def typed_param(default, text):
    if isinstance(default, bool):
        if text.lower() in ("true", "1", "yes"):
            return True
        if text.lower() in ("false", "0", "no"):
            return False
        raise ValueError(f"not a boolean: {text!r}")
    if isinstance(default, int):
        return int(text)
    if isinstance(default, float):
        return float(text)
    return text


def load_strategy(path):
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec = importlib.util.spec_from_file_location("strategy", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("strategy")
    ap.add_argument("data")
    ap.add_argument("--cash", type=float, default=100000.0)
    ap.add_argument("--fee-bps", type=float, default=0.0)
    ap.add_argument("--slippage-bps", type=float, default=0.0)
    ap.add_argument("--allow-short", action="store_true")
    ap.add_argument("--param", action="append", default=[], metavar="K=V")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    ap.add_argument("--executions", action="store_true", help="include every execution in the JSON")
    args = ap.parse_args(argv)

    t0, c0 = time.perf_counter(), time.process_time()
    module = load_strategy(args.strategy)
    manifest = getattr(module, "MANIFEST", {}) or {}
    params = dict(manifest.get("params", {}))
    for kv in args.param:
        k, sep, v = kv.partition("=")
        if not sep or (params and k not in params):
            ap.error(f"--param {kv}: the manifest declares no param {k!r}")
        params[k] = typed_param(params.get(k, ""), v)
    symbols, *cols = read_bars(args.data)
    t1, c1 = time.perf_counter(), time.process_time()
    with tempfile.TemporaryDirectory(prefix="floor-artifacts-") as artifacts:
        market = Market(symbols, cols, args.cash, args.fee_bps, args.slippage_bps, args.allow_short,
                        params, artifacts, int(manifest.get("history", 100)))
        metadata = market.run(module)
    t2, c2 = time.perf_counter(), time.process_time()

    n = len(cols[0])
    result = {
        "bars": n,
        "fills": market.fills,
        "rejections": market.rejections,
        "cash": market.cash,
        "positions": {symbols[s]: p for s, p in enumerate(market.position) if p != 0},
        "final_equity": market.equity(),
        "metadata": metadata,
        "elapsed_s": {"total": t2 - t0, "load": t1 - t0, "loop": t2 - t1},
        "cpu_s": {"total": c2 - c0, "load": c1 - c0, "loop": c2 - c1},
        "bars_per_s": {"total": n / (t2 - t0), "loop": n / (t2 - t1) if t2 > t1 else 0},
    }
    if args.executions:
        result["executions"] = [x._asdict() for x in market.executions]
    if args.json:
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
        return
    print(f"bars          {n}")
    print(f"fills         {market.fills}")
    print(f"rejections    {market.rejections}")
    print(f"final cash    {market.cash!r}")
    print(f"positions     {result['positions']}")
    print(f"final equity  {result['final_equity']!r}")
    if metadata is not None:
        print(f"metadata      {json.dumps(metadata)}")
    print(f"elapsed       {t2 - t0:.3f} s total, {t1 - t0:.3f} s load, {t2 - t1:.3f} s loop "
          f"({result['bars_per_s']['loop']:,.0f} bars/s)")
    print(f"cpu           {c2 - c0:.3f} s total, {c1 - c0:.3f} s load, {c2 - c1:.3f} s loop")


if __name__ == "__main__":
    main()
