"""stratbench worker bridge: imports a strategy and serves hook calls.

The host (stratbench) starts this file as
`bridge.py --fds R,A,S,C,DI,DO STRATEGY` with six inherited descriptors
(python/fds.go numbers them): R carries frames from the host, A frames to the
host, S is a shared page where the bridge publishes which hook call is running
(the host shows progress from it; it times every request on its own clock) and
where the host asks it to stop, and C carries command frames, which the host
reads after each answer, so issuing an order wakes nobody. DI and DO are the
debugger's own pipe pair (python/debug.go): breakpoint() stops at a pdb prompt
there in the workbench, and writes one notice to the log elsewhere. Standard
library only. Frames: a 4-byte big-endian length, one type byte, then the
payload (see python/protocol.go, which is the other half).
"""

import array
import bisect
import collections
import collections.abc
import datetime
import fcntl
import importlib.util
import io
import json
import linecache
import math
import mmap
import os
import struct
import sys
import time
import traceback

PROTOCOL = 4
# The descriptors' numbers come on the command line (--fds); these are
# python/fds.go's, for a bridge started by hand.
FD_IN, FD_OUT, FD_STATE, FD_COMMANDS, FD_DEBUG_IN, FD_DEBUG_OUT = 3, 4, 5, 6, 7, 8

_U32 = struct.Struct(">I")
# Binary records of the batch and yield frames (little-endian); protocol.go
# has the same layouts.
_BATCH_HEAD = struct.Struct("<QIIIII")  # first call, bars, symbols, executions, bars resumed, timestamp groups
_EXEC = struct.Struct("<qiBBHH2x5d2q")  # the fields of ExecRecord, in order
# One execution of a batch frame, with the portfolio after it: symbol is an
# index into the symbol table, or -1 when the order's symbol is not in it
# (its name then follows the reason).
ExecRecord = collections.namedtuple("ExecRecord", "order_id symbol side status reason_len name_len qty price fee "
                                                  "cash position time event")
_YIELD_HEAD = struct.Struct("<QBIII")  # through, stopped, durations, command frames sent, local fills
_COMMAND = struct.Struct("<BBHqddQ")  # op, has limit, len(symbol), id, qty, limit, call; then the symbol
# A fill the bridge delivered itself (Worker._take_order), for the host
# to check against its own: the call that placed the order, the order id,
# price, fee, cash and position after it, the fill bar's time.
_LOCAL = struct.Struct("<Qqddddq")
_SIDES = ("buy", "sell")
_STATUSES = ("filled", "rejected", "canceled")
# Words of the shared state page (fd 5): the call clock the bridge publishes
# (2k-1 while call k runs, 2k once it returned), the host's stop request, and
# the local word: 2m + e after the bridge delivered m fills of this batch
# itself, e = 1 while the m-th one's on_execution runs (the host names the
# call in flight with it).
CLOCK, STOP, LOCAL = 0, 1, 2
# How often the one-symbol bar loop looks for a stop request
# (Worker._run_bars_one_symbol).
_STOP_POLL_NS = 1_000_000
OP_BUY, OP_SELL, OP_CANCEL = 0, 1, 2
# The relative tolerance of quantities (backtest's qtyEpsilon).
_QTY_EPSILON = 1e-9
_UTC = datetime.timezone.utc
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=_UTC)
# The source's path, also where the interpreter runs the bridge's bytecode
# (python.CompileBridge): its code names the source, __file__ the .pyc.
_BRIDGE_FILE = os.path.abspath(sys._getframe().f_code.co_filename)


class Channel:
    """The framed protocol over the two dedicated pipes."""

    def __init__(self):
        for fd in (FD_IN, FD_OUT, FD_STATE, FD_COMMANDS):
            # Children the strategy starts must not inherit the protocol.
            flags = fcntl.fcntl(fd, fcntl.F_GETFD)
            fcntl.fcntl(fd, fcntl.F_SETFD, flags | fcntl.FD_CLOEXEC)
        # Command frames never block: when the command pipe is full, the
        # rest of the call's commands go inline on the answers pipe.
        flags = fcntl.fcntl(FD_COMMANDS, fcntl.F_GETFL)
        fcntl.fcntl(FD_COMMANDS, fcntl.F_SETFL, flags | os.O_NONBLOCK)
        self._overflow = False
        # Buffered: a frame's header and body usually come in one read.
        self._in = open(FD_IN, "rb", buffering=1 << 20, closefd=False)

    def send(self, kind, payload):
        self._write(_U32.pack(len(payload) + 1) + kind + payload)

    def _write(self, data):
        view = memoryview(data)
        while view:
            n = os.write(FD_OUT, view)
            view = view[n:]

    def send_command(self, payload):
        """Sends a command frame of payload (send_frame)."""
        self.send_frame(_U32.pack(len(payload) + 1) + b"C" + payload)

    def send_frame(self, frame):
        """Sends a command frame, its head included. It goes to the command
        pipe, which the host reads only after the call's answer (or after
        killing the worker), so it wakes nobody; a frame of a command is far
        below PIPE_BUF, so it is written whole or not at all. Once the pipe
        is full, the call's commands go on the answers pipe, after those in
        the pipe."""
        if not self._overflow:
            try:
                os.write(FD_COMMANDS, frame)
                return
            except BlockingIOError:
                self._overflow = True
        self._write(frame)

    def answered(self):
        """Called with each answer: the host drains the command pipe then."""
        self._overflow = False

    def send_json(self, kind, obj):
        self.send(kind, json.dumps(obj, separators=(",", ":"), allow_nan=False).encode())

    def recv(self):
        head = self._in.read(4)
        if len(head) < 4:
            raise EOFError("host closed the protocol channel")
        (n,) = _U32.unpack(head)
        if n == 0:
            raise ValueError("empty frame from host")
        frame = self._in.read(n)
        if len(frame) < n:
            raise EOFError("host closed the protocol channel")
        return frame[:1], memoryview(frame)[1:]


class Bar:
    """One bar: .time .open .high .low .close .volume."""

    __slots__ = ("_ns", "_time", "open", "high", "low", "close", "volume")

    def __init__(self, ns, o, h, l, c, v, when=None):
        # The time is made when asked for (unless when, a datetime, is it):
        # a datetime costs more than the rest of the bar, and ctx.bar.close
        # is read on every bar.
        self._ns = ns
        self._time = when
        self.open = o
        self.high = h
        self.low = l
        self.close = c
        self.volume = v

    @property
    def time(self):
        t = self._time
        if t is None:
            t = self._time = _utc(self._ns)
        return t

    def __repr__(self):
        return "Bar(time=%s, open=%r, high=%r, low=%r, close=%r, volume=%r)" % (
            self.time.isoformat(), self.open, self.high, self.low, self.close, self.volume)


def _utc(ns):
    return _EPOCH + datetime.timedelta(microseconds=int(ns) // 1000)


class _Window:
    """The sequence protocol History and ArrayHistory share: the window is
    the last `size` of the `end` bars served, indexed, sliced and iterated
    oldest first, each element a Bar (the subclass's bar(i) makes bar i of
    its columns)."""

    __slots__ = ()

    def __len__(self):
        e = self.end
        return e if e < self.size else self.size

    def __getitem__(self, i):
        e = self.end
        lo = e - self.size if e > self.size else 0
        if isinstance(i, slice):
            return [self.bar(lo + k) for k in range(*i.indices(e - lo))]
        if i < 0:
            i += e - lo
        if not 0 <= i < e - lo:
            raise IndexError("history index out of range")
        return self.bar(lo + i)

    def __iter__(self):
        e = self.end
        return (self.bar(k) for k in range(e - self.size if e > self.size else 0, e))

    def __repr__(self):
        return "<history %d bars>" % len(self)


class History(_Window):
    """The `history` argument of on_data: the recent bars of one symbol, oldest first.

    The columns hold the carried-over window followed by the current batch's
    bars of this symbol; `end` advances by one per bar, so serving a bar costs
    one integer store. A column view (history.close, ...) is a fresh list of
    the window's values, built only when the strategy asks for it. This is the
    history of strategies that do not use numpy (see ArrayHistory).

    A column is kept as the batch sent it (an array.array of machine
    numbers, copied as bytes) until the strategy reads its view: from then
    on it is a list of Python numbers, which later batches extend, so that
    the view is a slice. Making all six columns Python numbers at every
    batch was a twentieth of a one-symbol run's time, for columns most
    strategies never read whole (an element, ctx.bar or a fill's open, is
    the same number either way).
    """

    # _o, ..., _v are set, to the column itself, once it is a list: the
    # views look for them (an exception only at the first read costs
    # nothing after it, where a test of the column's type would cost a
    # twentieth of a view at every read).
    __slots__ = ("t", "o", "h", "l", "c", "v", "end", "size", "_o", "_h", "_l", "_c", "_v")

    def __init__(self, size):
        self.t = array.array("q")
        self.o, self.h, self.l, self.c, self.v = (array.array("d") for _ in range(5))
        self.end = 0
        self.size = size

    @property
    def received(self):
        """Bars received so far, served or not."""
        return len(self.t)

    def extend(self, t, o, h, l, c, v, keep_held):
        """Appends new bars, given as memoryviews of the batch's columns
        (int64 times, float64 prices and volumes). Bars held beyond `end`
        (received, not yet served) stay when keep_held, and are dropped
        otherwise.

        The served bars before the window go once they are at least as
        many as those after them, not at every batch: a batch that adds a
        few bars behind many held ones (a worker that went on far into its
        batch and was then sent a longer one) copies no held bar, and each
        bar moves a bounded number of times in all (as ArrayHistory's
        buffers)."""
        if not keep_held and len(self.t) > self.end:
            self.drop_held()
        lo = self.end - self.size
        if lo > 0 and 2 * lo >= len(self.t):
            del self.t[:lo], self.o[:lo], self.h[:lo], self.l[:lo], self.c[:lo], self.v[:lo]
            self.end -= lo
        _append(self.t, t)
        _append(self.o, o)
        _append(self.h, h)
        _append(self.l, l)
        _append(self.c, c)
        _append(self.v, v)

    def drop_held(self):
        """Forgets the bars received but not served."""
        del self.t[self.end :], self.o[self.end :], self.h[self.end :]
        del self.l[self.end :], self.c[self.end :], self.v[self.end :]

    def bar(self, i):
        return Bar(self.t[i], self.o[i], self.h[i], self.l[i], self.c[i], self.v[i])

    def bar_at(self, i, when):
        """Bar i, whose time is the datetime `when` (made once for all the
        bars of a timestamp)."""
        return Bar(self.t[i], self.o[i], self.h[i], self.l[i], self.c[i], self.v[i], when)

    # The column views are written out one by one: a shared helper would
    # cost one more Python call on every access, and strategies read a
    # column on every bar.
    @property
    def open(self):
        e = self.end
        try:
            o = self._o
        except AttributeError:
            o = self._o = self.o = self.o.tolist()
        return o[e - self.size if e > self.size else 0 : e]

    @property
    def high(self):
        e = self.end
        try:
            h = self._h
        except AttributeError:
            h = self._h = self.h = self.h.tolist()
        return h[e - self.size if e > self.size else 0 : e]

    @property
    def low(self):
        e = self.end
        try:
            l = self._l
        except AttributeError:
            l = self._l = self.l = self.l.tolist()
        return l[e - self.size if e > self.size else 0 : e]

    @property
    def close(self):
        e = self.end
        try:
            c = self._c
        except AttributeError:
            c = self._c = self.c = self.c.tolist()
        return c[e - self.size if e > self.size else 0 : e]

    @property
    def volume(self):
        e = self.end
        try:
            v = self._v
        except AttributeError:
            v = self._v = self.v = self.v.tolist()
        return v[e - self.size if e > self.size else 0 : e]

    @property
    def time(self):
        e = self.end
        return [_utc(ns) for ns in self.t[e - self.size if e > self.size else 0 : e]]

    @property
    def df(self):
        return _frame(self, None)


def _append(column, new):
    """Appends new, a memoryview of a batch's column, to a History column:
    as bytes to the array it was made as, as Python numbers to anything
    else (the list its view made, or whatever a strategy put in its place:
    a list of its own class extends as it did before the arrays)."""
    if type(column) is array.array:
        column.frombytes(new.cast("B"))
    else:
        column += new.tolist()


def _readonly(np, buf):
    """A read-only array over buf's memory that cannot be made writable: a
    view of a read-only buffer (a view of buf itself with writeable = False
    could be set writable again, and a strategy's writes would then change
    what later calls serve)."""
    return np.frombuffer(memoryview(buf).toreadonly(), dtype=buf.dtype).reshape(buf.shape)


class ArrayHistory(_Window):
    """The history of a strategy that uses numpy: the same interface as
    History, but the columns are read-only float64 numpy arrays (`time` is
    datetime64[ns], UTC) and `df` is a pandas DataFrame.

    Each column lives in a buffer that only grows at its end: the window is a
    view of the buffer's [end-size, end), so reading a column costs the same
    whatever the window's size, and an array the strategy keeps never changes
    afterwards, because a position of the buffer, once served, is never
    written again. When the buffer is full, the window and the bars still held
    move to fresh buffers (copying about `size` values once per `size` bars
    or more: constant per bar); arrays handed out keep the old buffers alive.
    """

    __slots__ = ("np", "size", "cap", "n", "end", "t", "o", "h", "l", "c", "v",
                 "_t", "_o", "_h", "_l", "_c", "_v", "_frame", "_frame_end")

    def __init__(self, size, np):
        self.np = np
        self.size = size
        self.n = 0  # bars received (served or held)
        self.end = 0  # bars served
        self._frame = None
        self._frame_end = -1
        self._allocate(max(2 * size, 1024), 0, 0)

    def _allocate(self, cap, lo, hi):
        """Moves bars [lo, hi) to the start of fresh buffers of cap bars."""
        np = self.np
        fresh = [np.empty(cap, dtype=np.int64)] + [np.empty(cap, dtype=np.float64) for _ in range(5)]
        if hi > lo:
            for new, old in zip(fresh, (self.t, self.o, self.h, self.l, self.c, self.v)):
                new[: hi - lo] = old[lo:hi]
        # t, o, ... are the writable buffers the bridge fills; _t, _o, ... are
        # read-only views of them, from which every array handed out is cut.
        self.t, self.o, self.h, self.l, self.c, self.v = fresh
        views = [_readonly(np, b) for b in fresh]
        views[0] = views[0].view("datetime64[ns]")
        self._t, self._o, self._h, self._l, self._c, self._v = views
        self.cap = cap

    @property
    def received(self):
        return self.n

    def extend(self, t, o, h, l, c, v, keep_held):
        n = self.n if keep_held else self.end
        m = len(t)
        if n + m > self.cap:
            lo = max(0, self.end - self.size)
            self._allocate(max(self.cap, 2 * (n - lo + m)), lo, n)
            self.end -= lo
            n -= lo
        for buf, col in ((self.t, t), (self.o, o), (self.h, h), (self.l, l), (self.c, c), (self.v, v)):
            buf[n : n + m] = col
        self.n = n + m

    def drop_held(self):
        self.n = self.end

    def bar(self, i):
        return Bar(self.t[i], float(self.o[i]), float(self.h[i]), float(self.l[i]), float(self.c[i]),
                   float(self.v[i]))

    def bar_at(self, i, when):
        return Bar(self.t[i], self.o.item(i), self.h.item(i), self.l.item(i), self.c.item(i), self.v.item(i), when)

    @property
    def open(self):
        e = self.end
        return self._o[e - self.size if e > self.size else 0 : e]

    @property
    def high(self):
        e = self.end
        return self._h[e - self.size if e > self.size else 0 : e]

    @property
    def low(self):
        e = self.end
        return self._l[e - self.size if e > self.size else 0 : e]

    @property
    def close(self):
        e = self.end
        return self._c[e - self.size if e > self.size else 0 : e]

    @property
    def volume(self):
        e = self.end
        return self._v[e - self.size if e > self.size else 0 : e]

    @property
    def time(self):
        e = self.end
        return self._t[e - self.size if e > self.size else 0 : e]

    @property
    def df(self):
        # Built at most once per call: a call serves one bar, so `end` names it.
        if self._frame_end != self.end:
            self._frame = _frame(self, self.np)
            self._frame_end = self.end
        return self._frame


def _frame(history, np):
    """history's window as a pandas DataFrame indexed by UTC time."""
    try:
        import pandas
    except ImportError as exc:
        raise ImportError("history.df needs pandas, which %s cannot import (%s); install pandas into that "
                          "interpreter, or use the columns history.close, ..." % (sys.executable, exc)) from None
    if np is None:
        times = [_utc(ns) for ns in history.t[max(0, history.end - history.size) : history.end]]
        index = pandas.DatetimeIndex(times, name="time")
    else:
        index = pandas.DatetimeIndex(history.time, name="time").tz_localize("UTC")
    return pandas.DataFrame({"open": history.open, "high": history.high, "low": history.low,
                             "close": history.close, "volume": history.volume}, index=index)


class Panel:
    """The panels of ctx.panel, for an on_bars strategy that uses numpy: per
    field (open, high, low, close, volume), a float64 buffer of rows, one
    row per timestamp and one column per symbol (in ctx.symbols order), NaN
    where a symbol has no bar at that time.

    Like ArrayHistory's columns, a buffer only grows at its end: the last n
    rows are a view of [end-n, end), so a panel costs the same whatever n,
    and an array the strategy keeps never changes afterwards, because a row,
    once served, is never written again. The rows of a batch are written
    when it arrives, a few numpy calls for all of its bars; the rows not
    served yet lie beyond `end`, out of every view. When a buffer is full,
    the last `size` rows and those held move to fresh buffers (about `size`
    rows copied once per `size` timestamps or more); arrays handed out keep
    the old buffers alive.
    """

    FIELDS = ("open", "high", "low", "close", "volume")
    __slots__ = ("np", "size", "width", "cap", "n", "end", "bufs", "views")

    def __init__(self, size, width, np):
        self.np = np
        self.size = size  # MANIFEST['history']: the most rows a panel has
        self.width = width
        self.n = 0  # rows received (served or held)
        self.end = 0  # rows served
        self.bufs = ()
        self._allocate(max(2 * size, 64), 0, 0)

    def _allocate(self, cap, lo, hi):
        """Moves rows [lo, hi) to the start of fresh buffers of cap rows."""
        np = self.np
        fresh = [np.empty((cap, self.width), dtype=np.float64) for _ in self.FIELDS]
        if hi > lo:
            for new, old in zip(fresh, self.bufs):
                new[: hi - lo] = old[lo:hi]
        self.bufs = fresh
        views = [_readonly(np, b) for b in fresh]
        self.views = dict(zip(self.FIELDS, views))
        self.cap = cap

    def drop_held(self):
        self.n = self.end

    def extend(self, groups, syms, cols, keep_held):
        """Appends a row for each of the new bars' timestamps: groups are
        their sizes, syms the bars' symbol indexes in event order, cols the
        five value columns, grouped by symbol as the batch frame has them.
        Rows held beyond `end` stay when keep_held and are dropped otherwise."""
        np = self.np
        g = len(groups)
        n = self.n if keep_held else self.end
        if n + g > self.cap:
            lo = max(0, self.end - self.size)
            self._allocate(max(self.cap, 2 * (n - lo + g)), lo, n)
            self.end -= lo
            n -= lo
        # The bars' rows and columns in the frame's order (by symbol, each
        # symbol's in event order): a stable sort of the event order by
        # symbol is exactly that order.
        row = np.repeat(np.arange(n, n + g), groups)
        order = np.argsort(syms, kind="stable")
        rows, columns = row[order], syms[order]
        for buf, values in zip(self.bufs, cols):
            buf[n : n + g] = np.nan
            buf[rows, columns] = values
        self.n = n + g

    def window(self, field, count):
        view = self.views.get(field) if isinstance(field, str) else None
        if view is None:
            raise ValueError("ctx.panel field must be one of %s, got %r" % (", ".join(self.FIELDS), field))
        if isinstance(count, bool) or not isinstance(count, int) and not hasattr(count, "__index__"):
            raise TypeError("ctx.panel n must be an int, got %s" % type(count).__name__)
        count = int(count)
        if not 1 <= count <= self.size:
            raise ValueError("ctx.panel n must be between 1 and MANIFEST['history'] (%d), got %d" % (self.size, count))
        e = self.end
        return view[e - count if e > count else 0 : e]


class Bars(collections.abc.Mapping):
    """The `bars` argument of on_bars: symbol -> Bar of every symbol that has
    a bar at ctx.time, in ctx.symbols order; a symbol without a bar then is
    absent. A Bar is made when it is first asked for, from the symbol's
    history; items() and values() make them all at once. A `bars` the
    strategy keeps past its call keeps its bars: the bridge makes them all
    when the call returns (see Worker._run_groups)."""

    __slots__ = ("_ks", "_ctx", "_when", "_made", "_all")

    def __init__(self, ks, ctx):
        self._ks = ks  # the symbols' indexes, ascending
        self._ctx = ctx
        self._when = None  # the bars' time, a datetime, once made
        self._made = None  # symbol -> Bar, of the bars made so far
        self._all = False  # whether _made has every bar, in order

    def _find(self, symbol):
        try:
            k = self._ctx._index.get(symbol)
        except TypeError:  # unhashable
            return None
        if k is None:
            return None
        ks = self._ks
        i = bisect.bisect_left(ks, k)
        return k if i < len(ks) and ks[i] == k else None

    def _time(self):
        when = self._when
        if when is None:
            when = self._when = _utc(self._ctx._time_ns)
        return when

    def __getitem__(self, symbol):
        made = self._made
        if made is not None:
            bar = made.get(symbol)
            if bar is not None:
                return bar
            if self._all:
                raise KeyError(symbol)
        k = self._find(symbol)
        if k is None:
            raise KeyError(symbol)
        h = self._ctx._histories[k]
        bar = h.bar_at(h.end - 1, self._time())
        if made is None:
            self._made = made = {}
        made[symbol] = bar
        return bar

    def get(self, symbol, default=None):
        try:
            return self[symbol]
        except KeyError:
            return default

    def __contains__(self, symbol):
        if self._all:
            return symbol in self._made
        return self._find(symbol) is not None

    def __len__(self):
        return len(self._ks)

    def __iter__(self):
        names = self._ctx._symbols
        return (names[k] for k in self._ks)

    def _every(self):
        """Makes every bar (those not made yet) and returns them, in order."""
        if not self._all:
            ctx = self._ctx
            names, histories, made = ctx._symbols, ctx._histories, self._made
            when = self._time()
            every = {}
            if made or type(histories[0]) is not History:
                for k in self._ks:
                    name = names[k]
                    bar = made.get(name) if made else None
                    if bar is None:
                        h = histories[k]
                        bar = h.bar_at(h.end - 1, when)
                    every[name] = bar
            else:
                # The common case, written out: the lists' values as they are.
                for k in self._ks:
                    h = histories[k]
                    i = h.end - 1
                    every[names[k]] = Bar(h.t[i], h.o[i], h.h[i], h.l[i], h.c[i], h.v[i], when)
            self._made, self._all = every, True
        return self._made

    _freeze = _every

    def items(self):
        return self._every().items()

    def values(self):
        return self._every().values()

    def __repr__(self):
        return "Bars(%r)" % self._every()


class Execution:
    """The `execution` argument of on_execution."""

    __slots__ = ("order_id", "symbol", "side", "qty", "price", "fee", "status", "reason", "time")

    def __init__(self, order_id, symbol, side, qty, price, fee, status, reason, time_ns):
        self.order_id = order_id
        self.symbol = symbol
        self.side = side
        self.qty = qty
        self.price = price
        self.fee = fee
        self.status = status
        self.reason = reason
        self.time = _utc(time_ns)

    def __repr__(self):
        return "Execution(order_id=%r, symbol=%r, side=%r, qty=%r, price=%r, fee=%r, status=%r, reason=%r)" % (
            self.order_id, self.symbol, self.side, self.qty, self.price, self.fee, self.status, self.reason)


_isfinite = math.isfinite

# By the length of its symbol (at most 256 bytes): the struct of a command
# frame (its head, the command, the symbol) and its head, made once.
_COMMAND_FRAMES = {}


def _command_frame(n):
    form = _COMMAND_FRAMES.get(n)
    if form is None:
        form = _COMMAND_FRAMES[n] = (struct.Struct("<5s" + _COMMAND.format[1:] + "%ds" % n),
                                     _U32.pack(1 + _COMMAND.size + n) + b"C")
    return form


def _number(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("%s must be a number, got %s" % (name, type(value).__name__))
    if not math.isfinite(value):
        raise ValueError("%s must be finite, got %r" % (name, value))
    return value


class Context:
    """The `ctx` argument of every hook."""

    def __init__(self, symbols, histories, params, cash, artifacts, state, chan, by_time=False, panel=None,
                 panel_problem=None):
        self._state = state
        self._chan = chan
        self._symbols = tuple(symbols)
        self._index = {s: i for i, s in enumerate(symbols)}
        self._histories = histories
        # ctx.symbol's history; on_bars has no one symbol.
        self._hist = histories[0] if histories and not by_time else None
        self.symbol = symbols[0] if symbols and not by_time else None
        self._time_ns = None
        self._panel = panel
        self._panel_problem = panel_problem
        self._positions = {}
        self._issued = 0  # command frames sent by the call in flight (or since the last yield)
        # The call's one order, when it is a market order (op, symbol, qty, id);
        # None when it issued none, or anything else (a limit, a cancel, more).
        self._market = None
        self._open = set()  # ids of the orders placed and not closed by an execution yet
        self._next_id = 1
        self._frames = {}  # symbol: how to pack an order's command frame (_order_form)
        self._artifacts = artifacts
        self.params = params
        self.cash = cash

    def _focus(self, k):
        self._hist = self._histories[k]
        self.symbol = self._symbols[k]

    @property
    def time(self):
        if self._time_ns is not None:
            return _utc(self._time_ns)
        h = self._hist
        return _utc(h.t[h.end - 1]) if h is not None and h.end else None

    @property
    def bar(self):
        h = self._hist
        return h.bar(h.end - 1) if h is not None and h.end else None

    @property
    def symbols(self):
        """The data's symbols, a tuple in name order (the report's data.symbols)."""
        return self._symbols

    def history(self, symbol):
        """symbol's window as of the current event: the same object each
        call, of the type of on_data's history (numpy columns with numpy)."""
        try:
            k = self._index.get(symbol)
        except TypeError:
            k = None
        if k is None:
            if not isinstance(symbol, str):
                raise TypeError("symbol must be a str, got %s" % type(symbol).__name__)
            known = ", ".join(self._symbols[:10]) + (", ..." if len(self._symbols) > 10 else "")
            raise KeyError("no symbol %r in the data (ctx.symbols: %s)" % (symbol, known))
        return self._histories[k]

    def panel(self, field, n):
        """The last n timestamps of field ("open", "high", "low", "close",
        "volume") for every symbol: a read-only float64 array of n rows (fewer
        before the n-th timestamp), one column per symbol in ctx.symbols
        order, NaN where a symbol has no bar at that time. on_bars with numpy
        only; 1 <= n <= MANIFEST['history']."""
        if self._panel is None:
            raise RuntimeError(self._panel_problem)
        return self._panel.window(field, n)

    @property
    def equity(self):
        total = self.cash
        for sym, qty in self._positions.items():
            if qty:
                h = self._histories[self._index[sym]]
                if h.end:
                    total += qty * h.c[h.end - 1]
        return total

    def position(self, symbol):
        return self._positions.get(symbol, 0)

    def _order(self, op, symbol, qty, limit):
        # An order on a symbol of the data (the common case, on every bar of
        # some strategies) packs its whole frame at once, from what the
        # first order on the symbol checked and made (_order_form); its qty
        # and limit are checked here, in the same order.
        form = self._frames.get(symbol) if type(symbol) is str else None
        if form is None:
            form, limit = self._order_form(symbol, qty, limit)
        else:
            if (type(qty) is not float and type(qty) is not int) or not _isfinite(qty):
                _number("qty", qty)
            if limit is not None:
                limit = float(_number("limit", limit))
        frame, head, name = form  # frame: the frame's struct
        oid = self._next_id
        self._next_id = oid + 1
        # Sent at once, so the host knows every command a call issued even
        # if the call never returns; it commits them when the call does.
        # The call that issues it is the one the clock names.
        qty = float(qty)
        self._chan.send_frame(frame.pack(head, op, limit is not None, len(name), oid, qty, 0.0 if limit is None else limit,
                                         (self._state[CLOCK] + 1) >> 1, name))
        self._market = (op, symbol, qty, oid) if limit is None and not self._issued else None
        self._issued += 1
        self._open.add(oid)
        return oid

    def _order_form(self, symbol, qty, limit):
        """Checks an order's symbol, qty and limit, in that order, and
        returns how to pack its command frame (a struct of the frame, its
        head, the symbol's bytes) and the limit as a float. That of a
        symbol of the data is kept for the next order on it."""
        if not isinstance(symbol, str):
            raise TypeError("symbol must be a str, got %s" % type(symbol).__name__)
        _number("qty", qty)
        if limit is not None:
            limit = float(_number("limit", limit))
        name = symbol.encode()
        if len(name) > 256:
            raise ValueError("symbol of %d bytes; at most 256" % len(name))
        form = _command_frame(len(name)) + (name,)
        if type(symbol) is str and symbol in self._index:
            self._frames[symbol] = form
        return form, limit

    def buy(self, symbol, qty, limit=None):
        """Buy qty of symbol: at the next bar's open, or as a limit order."""
        return self._order(OP_BUY, symbol, qty, limit)

    def sell(self, symbol, qty, limit=None):
        """Sell qty of symbol: at the next bar's open, or as a limit order."""
        return self._order(OP_SELL, symbol, qty, limit)

    def cancel(self, order_id):
        """Cancel an open order; on_execution reports the outcome."""
        if isinstance(order_id, bool) or not isinstance(order_id, int):
            raise TypeError("order_id must be an int, got %s" % type(order_id).__name__)
        if not 0 < order_id < 1 << 63:
            raise ValueError("order_id must be a positive id returned by ctx.buy or ctx.sell, got %d" % order_id)
        self._chan.send_command(_COMMAND.pack(OP_CANCEL, False, 0, order_id, 0.0, 0.0, (self._state[CLOCK] + 1) >> 1))
        self._market = None
        self._issued += 1

    def artifact_path(self, name):
        """A path inside the job's artifacts folder."""
        name = str(name)
        if not name or "/" in name or "\\" in name or name in (".", ".."):
            raise ValueError("artifact name must be a plain file name, got %r" % name)
        return os.path.join(self._artifacts, name)


def _is_internal(filename):
    return filename.startswith("<frozen ") or os.path.abspath(filename) == _BRIDGE_FILE


# Folders of installed code, which may lie inside the strategy's folder (a
# project's .venv): their frames are not the strategy's own.
_LIBRARY_DIRS = tuple(sorted({os.path.abspath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}))


def _is_user(filename, strategy_dir):
    path = os.path.abspath(filename)
    if not path.startswith(strategy_dir + os.sep) or path == _BRIDGE_FILE:
        return False
    return not _installed_below(path, strategy_dir, _LIBRARY_DIRS)


def _installed_below(path, folder, library_dirs):
    """Whether path, a file inside folder, is installed code that lies in
    it: in a site-packages or dist-packages folder, or an interpreter's
    prefix (library_dirs, each ending with a separator), below folder (a
    project's .venv). Only what lies below folder counts: a folder that is
    itself inside a site-packages or a prefix (strategies shipped as a
    package) holds the strategy's own code all the same."""
    parts = path[len(folder) + 1:].split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts:
        return True
    return any(d.startswith(folder + os.sep) and path.startswith(d) for d in library_dirs)


# An error report must fit in one message: its texts are cut beyond this.
_TEXT_MAX = 64 << 10


def _cut(text):
    if len(text) <= _TEXT_MAX:
        return text
    return text[:_TEXT_MAX] + " … [cut: %d characters]" % (len(text) - _TEXT_MAX)


def _error_payload(call, hook, exc, strategy_dir):
    """Describes exc with the bridge's and importlib's frames left out: they are not the user's concern."""
    kept = [fs for fs in traceback.extract_tb(exc.__traceback__) if not _is_internal(fs.filename)][-200:]
    frames = [{"file": fs.filename, "line": fs.lineno or 0, "function": fs.name,
               "source": _cut((fs.line or "").strip()), "user": _is_user(fs.filename, strategy_dir)} for fs in kept]
    if isinstance(exc, SyntaxError) and exc.filename:
        frames.append({"file": exc.filename, "line": exc.lineno or 0, "function": "<module>",
                       "source": _cut((exc.text or "").strip()), "user": _is_user(exc.filename, strategy_dir)})
    message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    text = "".join(traceback.format_exception_only(type(exc), exc))
    if kept:
        text = "Traceback (most recent call last):\n" + "".join(traceback.StackSummary.from_list(kept).format()) + text
    return {"call": call, "hook": hook, "type": type(exc).__name__, "message": _cut(message),
            "traceback": _cut(text), "frames": frames}



# --- The debugger (python/debug.go is the host's half) ----------------------
#
# breakpoint() (PEP 553: sys.breakpointhook, set here) stops at a pdb prompt
# only where a person can answer it: the workbench, which writes a hello on
# the debugger's input pipe before the worker starts. Elsewhere (--ci, a
# sweep, Ray) the host writes nothing and closes its ends, and breakpoint()
# writes one notice per place to the log and goes on. Children of the worker
# get PYTHONBREAKPOINT=0: they have no prompt to stop at.
#
# At the prompt, pdb reads its commands from the host's frames and writes to
# a buffer, sent with the next prompt: where it stopped, the source around
# the line, the stack and the frame's locals (the bridge's own frames left
# out). The host pauses the hook's time limit while its workbench shows the
# prompt and waits for a person; the bridge only subtracts the time it spent
# waiting from the call durations it reports, which are informational.

_DEBUG_FRAME_MAX = 1 << 20  # python.MaxDebugMessage
_DEBUG_TEXT = 500  # bytes of a source line, a name or a value (the host takes 512)
_DEBUG_PATH = 4000  # bytes of a path or a function name's 256
_DEBUG_OUTPUT = 60 << 10  # the tail of what pdb printed (the host takes 64 KiB)
_DEBUG_CONTEXT = 15  # source lines above and below the current one
_DEBUG_ITEMS = 64  # frames and locals sent, at most
_NOTICE_PLACES = 100  # places breakpoint() is noted in a run without a debugger


def _utf8_cut(text, limit):
    """text as valid UTF-8 of at most limit bytes (a lone surrogate becomes ?)."""
    data = str(text).encode("utf-8", "replace")
    if len(data) <= limit:
        return data.decode("utf-8")
    return data[: limit - 3].decode("utf-8", "ignore") + "…"


class _Notices:
    """breakpoint() where no person can answer a prompt: one notice on
    stderr per file and line, up to _NOTICE_PLACES places, then one more
    saying so; each call costs a set lookup."""

    def __init__(self):
        self.seen = set()
        self.capped = False

    def hook(self, *args, **kwargs):
        frame = sys._getframe(1)
        place = (frame.f_code.co_filename, frame.f_lineno)
        if place in self.seen or self.capped:
            return None
        if len(self.seen) >= _NOTICE_PLACES:
            self.capped = True
            sys.stderr.write("stratbench: breakpoint() calls at more than %d places: the others are not noted\n"
                             % _NOTICE_PLACES)
            return None
        self.seen.add(place)
        sys.stderr.write("stratbench: breakpoint() at %s:%d goes on: the debugger stops only in the workbench "
                         "(noted once per line)\n" % (os.path.basename(place[0]), place[1]))
        return None


class _DebugPipe:
    """The debugger's frames over its own pipe pair."""

    def __init__(self, fd_in, fd_out):
        self.fd_in, self.fd_out = fd_in, fd_out

    def _read(self, n):
        data = b""
        while len(data) < n:
            chunk = os.read(self.fd_in, n - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    def recv(self):
        """The host's next frame as (type, payload), or (None, b"") once the
        host closed its end (or never wrote)."""
        head = self._read(4)
        if head is None:
            return None, b""
        (n,) = _U32.unpack(head)
        if not 0 < n <= _DEBUG_FRAME_MAX:
            return None, b""
        frame = self._read(n)
        if frame is None:
            return None, b""
        return frame[:1], frame[1:]

    def send(self, kind, obj):
        payload = json.dumps(obj, separators=(",", ":"), allow_nan=False).encode()
        view = memoryview(_U32.pack(len(payload) + 1) + kind + payload)
        while view:
            view = view[os.write(self.fd_out, view):]


def _debug_start(worker):
    """Sets sys.breakpointhook for the run: a _Debugger when the host sent
    its hello (the workbench), else _Notices. Returns the _Debugger, or None."""
    os.environ["PYTHONBREAKPOINT"] = "0"  # a child has no prompt to stop at
    fds = (FD_DEBUG_IN, FD_DEBUG_OUT)
    hello = None
    try:
        for fd in fds:
            fcntl.fcntl(fd, fcntl.F_SETFD, fcntl.fcntl(fd, fcntl.F_GETFD) | fcntl.FD_CLOEXEC)
        kind, payload = _DebugPipe(*fds).recv()
        if kind == b"H":
            hello = json.loads(payload)
    except (OSError, ValueError):
        hello = None
    if hello is None:
        # The host's ends are closed: the descriptors stay, leading nowhere.
        sys.breakpointhook = _Notices().hook
        return None
    debugger = _Debugger(worker, _DebugPipe(*fds), hello.get("breaks") or [])
    sys.breakpointhook = debugger.hook
    return debugger


class _PromptInput:
    """pdb's stdin: each line read is a prompt sent to the host, and its answer."""

    def __init__(self, debugger):
        self.debugger = debugger

    def readline(self):
        return self.debugger.prompt()


class _Debugger:
    """pdb at the workbench's prompt, over the debugger's pipe pair."""

    def __init__(self, worker, pipe, breaks):
        self.worker = worker
        self.pipe = pipe
        self.breaks = breaks
        self.pdb = None
        self.detached = False  # the host asked the run to stop, or q: no more stops
        self.prompted = False  # a prompt was sent since the interaction began
        self.paused = collections.Counter()  # call -> ns spent waiting at the prompt

    def make(self):
        if self.pdb is None:
            self.pdb = _pdb_class()(self)
        return self.pdb

    def install(self):
        """Sets the breakpoints the host gave, before the strategy loads;
        one that cannot be set is noted on stderr. Tracing runs only while
        some are set, and then only in the frames of their files."""
        if not self.breaks:
            return
        p = self.make()
        for b in self.breaks[:32]:
            try:
                path = os.path.realpath(str(b["file"]))
                line = int(b["line"])
                cond = b.get("cond") or None
            except (KeyError, TypeError, ValueError):
                continue
            problem = p.set_break(path, line, cond=cond)
            if problem:
                sys.stderr.write("stratbench: breakpoint %s:%d not set: %s\n" % (os.path.basename(path), line, problem))
        if p.breaks:
            p.reset()
            p.botframe = sys._getframe()
            p.set_continue()
            sys.settrace(p.trace_dispatch)

    def hook(self, *args, **kwargs):
        """sys.breakpointhook: stop in the caller of breakpoint()."""
        if self.detached or self.worker.state[STOP]:
            return None
        self.make().set_trace(sys._getframe(1))
        return None

    def detach(self):
        self.detached = True
        if self.pdb is not None:
            self.pdb.clear_all_breaks()

    def call(self):
        clock = self.worker.state[CLOCK]
        return (clock + 1) // 2 if clock % 2 else 0

    def prompt(self):
        """Sends the prompt (where pdb stopped, and what it printed), waits
        for the host's answer and returns it as pdb's input line."""
        p = self.pdb
        out = p.stdout.getvalue()
        p.stdout.seek(0)
        p.stdout.truncate()
        if self.detached or self.worker.state[STOP]:
            self.detach()
            return "continue\n"
        if out.endswith(p.prompt):
            out = out[: -len(p.prompt)]
        msg = self.state(p, out)
        call = self.call()
        t0 = time.perf_counter_ns()
        try:
            self.pipe.send(b"P", msg)
            self.prompted = True
            kind, payload = self.pipe.recv()
        except OSError:
            kind, payload = None, b""
        self.paused[call] += time.perf_counter_ns() - t0
        if kind == b"L":
            return bytes(payload).decode("utf-8", "replace").replace("\n", " ") + "\n"
        # The run is stopping (X), or the host is gone: no more stops.
        self.detach()
        return "continue\n"

    def state(self, p, out):
        frame, lineno = p.stack[p.curindex]
        code = frame.f_code
        lines = linecache.getlines(code.co_filename, frame.f_globals)
        breaks = set(p.get_file_breaks(code.co_filename))
        lo, hi = max(1, lineno - _DEBUG_CONTEXT), min(len(lines), lineno + _DEBUG_CONTEXT)
        source = [{"n": n, "text": _utf8_cut(lines[n - 1].rstrip("\r\n"), _DEBUG_TEXT), "break": n in breaks}
                  for n in range(lo, hi + 1)]
        stack = [{"file": _utf8_cut(f.f_code.co_filename, _DEBUG_PATH), "line": ln,
                  "function": _utf8_cut(f.f_code.co_name, 250), "current": i == p.curindex,
                  "user": _is_user(f.f_code.co_filename, self.worker.dir)}
                 for i, (f, ln) in enumerate(p.stack)][-_DEBUG_ITEMS:]
        import reprlib

        r = reprlib.Repr()
        r.maxstring = r.maxother = 200
        names = [k for k in getattr(p, "curframe_locals", frame.f_locals) if not str(k).startswith("__")]
        local_vars = []
        values = getattr(p, "curframe_locals", frame.f_locals)
        for name in names[:_DEBUG_ITEMS]:
            try:
                value = r.repr(values[name])
            except BaseException as exc:  # a repr of the strategy's that fails is shown as such
                value = "<repr failed: %s>" % type(exc).__name__
            local_vars.append({"name": _utf8_cut(name, 250), "value": _utf8_cut(value, _DEBUG_TEXT)})
        out = out[-_DEBUG_OUTPUT:]
        return {"file": _utf8_cut(code.co_filename, _DEBUG_PATH), "line": lineno,
                "function": _utf8_cut(code.co_name, 250), "source": source, "stack": stack, "locals": local_vars,
                "output": _utf8_cut(out, _DEBUG_OUTPUT + 4 * 1024)}

    def resumed(self, p):
        """After the prompt's command loop: tell the host the worker runs again."""
        if not self.prompted:
            return
        self.prompted = False
        how = "continue" if p.stopframe is p.botframe and p.stoplineno == -1 else "step"
        try:
            self.pipe.send(b"R", {"how": how})
        except OSError:
            self.detach()

    def charged(self, durations, first):
        """Takes the time spent at the prompt out of the durations of calls
        first, first+1, ... (the worker's report of its calls)."""
        if not self.paused:
            return durations
        out = list(durations)
        for call, ns in self.paused.items():
            if 0 <= call - first < len(out):
                out[call - first] = max(0, out[call - first] - ns)
        self.paused.clear()
        return out


def _pdb_class():
    """The pdb.Pdb the workbench's prompt runs, made at the first stop:
    importing pdb takes tens of milliseconds."""
    import pdb

    class Pdb(pdb.Pdb):
        def __init__(self, debugger):
            self.debugger = debugger
            # Not readline: its import may write to the terminal, and the
            # prompt has no terminal.
            saved = sys.modules.get("readline", _ABSENT)
            sys.modules["readline"] = None
            try:
                super().__init__(stdin=_PromptInput(debugger), stdout=io.StringIO(), nosigint=True, readrc=False)
            finally:
                if saved is _ABSENT:
                    del sys.modules["readline"]
                else:
                    sys.modules["readline"] = saved
            self.use_rawinput = False

        # The bridge's own frames are not the strategy's: never a stop there.
        def stop_here(self, frame):
            return not _is_internal(frame.f_code.co_filename) and super().stop_here(frame)

        def break_here(self, frame):
            return not _is_internal(frame.f_code.co_filename) and super().break_here(frame)

        def setup(self, f, tb):
            done = super().setup(f, tb)
            current = self.stack[self.curindex][0]
            kept = [e for e in self.stack if not _is_internal(e[0].f_code.co_filename)]
            for i, (frame, _) in enumerate(kept):
                if frame is current:
                    self.stack, self.curindex = kept, i
            return done

        def interaction(self, frame, traceback):
            if self.debugger.detached or self.debugger.worker.state[STOP]:
                self.debugger.detach()
                self.set_continue()
                return
            try:
                super().interaction(frame, traceback)
            finally:
                self.debugger.resumed(self)

        # q, like c, lets the run go on, and it stops no more: the workbench's
        # s stops a run.
        def do_quit(self, arg):
            self.debugger.detach()
            return self.do_continue(arg)

        do_q = do_exit = do_EOF = do_quit

    return Pdb


_ABSENT = object()


class Worker:
    def __init__(self, strategy_path, path_set=False):
        self.path = os.path.abspath(strategy_path)
        self.dir = os.path.dirname(self.path)
        # A run forked from a template has the strategy's folder on
        # sys.path already, set before the template's imports (which may
        # have changed sys.path since, as they would in a cold start).
        self.path_set = path_set
        self.chan = Channel()
        self._state_map = mmap.mmap(FD_STATE, 4096)
        self.state = memoryview(self._state_map).cast("Q")
        self.module = None
        self.ctx = None
        self.histories = []
        self.hooks = {}
        self.history = 100
        self.debugger = _debug_start(self)

    def fail(self, call, hook, exc, durations=()):
        payload = _error_payload(call, hook, exc, self.dir)
        payload["durations"] = self._charged(durations, call - len(durations))
        sys.stderr.write(payload["traceback"])
        sys.stderr.flush()
        self.chan.send_json(b"E", payload)

    def load(self):
        name = os.path.splitext(os.path.basename(self.path))[0] or "strategy"
        if not self.path_set:
            sys.path[0:1] = [self.dir]  # the bridge's folder off sys.path, the strategy's first
        spec = importlib.util.spec_from_file_location(name, self.path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        self.module = module
        on_data = getattr(module, "on_data", None)
        on_bars = getattr(module, "on_bars", None)
        if on_data is not None and on_bars is not None:
            raise TypeError("%s defines both on_data and on_bars: define on_data(ctx, history), called once per bar, "
                            "or on_bars(ctx, bars), called once per timestamp, not both" % os.path.basename(self.path))
        if not callable(on_data) and not callable(on_bars):
            raise AttributeError("%s defines no on_data(ctx, history) function (nor on_bars(ctx, bars))"
                                 % os.path.basename(self.path))
        for hook in ("on_data", "on_bars", "on_execution", "on_finish"):
            fn = getattr(module, hook, None)
            if fn is not None:
                if not callable(fn):
                    raise TypeError("%s is not a function" % hook)
                self.hooks[hook] = fn
        manifest = getattr(module, "MANIFEST", None)
        if manifest is None:
            manifest = {}
        if not isinstance(manifest, dict):
            raise TypeError("MANIFEST must be a dict, got %s" % type(manifest).__name__)
        params = manifest.get("params", {})
        if not isinstance(params, dict):
            raise TypeError("MANIFEST['params'] must be a dict, got %s" % type(params).__name__)
        for key, value in params.items():
            if not isinstance(key, str) or not isinstance(value, (bool, int, float, str)):
                raise TypeError("MANIFEST['params'][%r] must be an int, float, bool or str default, got %s"
                                % (key, type(value).__name__))
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError("MANIFEST['params'][%r] must be finite" % key)
            if isinstance(value, int) and not isinstance(value, bool) and not -(1 << 63) <= value < 1 << 63:
                raise ValueError("MANIFEST['params'][%r] = %d does not fit in a 64-bit integer (-2**63 to 2**63-1)"
                                 % (key, value))
        history = manifest.get("history", 100)
        if isinstance(history, bool) or not isinstance(history, int) or not 1 <= history <= 1_000_000:
            raise ValueError("MANIFEST['history'] must be an int between 1 and 1000000, got %r" % (history,))
        name = manifest.get("name")
        if name is not None and not isinstance(name, str):
            raise TypeError("MANIFEST['name'] must be a str")
        self.history = history
        return {"protocol": PROTOCOL, "hooks": sorted(self.hooks),
                "name": name, "params": params, "history": history,
                "python": {"executable": sys.executable, "version": "%d.%d.%d" % sys.version_info[:3]}}

    def init(self, msg):
        self.on_data = self.hooks.get("on_data")
        self.on_bars = self.hooks.get("on_bars")
        self.on_execution = self.hooks.get("on_execution")
        symbols = msg["symbols"]
        # numpy columns when the strategy (or anything it imported) has
        # imported numpy by now; otherwise nothing extra is imported.
        self.np = sys.modules.get("numpy")
        if self.np is not None:
            self.histories = [ArrayHistory(self.history, self.np) for _ in symbols]
        else:
            self.histories = [History(self.history) for _ in symbols]
        # The bars received but not served: held_count of them; with
        # several symbols (or on_bars), their event order is
        # held_syms[held_from:] (symbol indexes), a list kept as it came
        # rather than copied at every yield.
        self.held_syms, self.held_from, self.held_count = None, 0, 0
        # on_bars: one call per timestamp, the panels with numpy.
        self.by_time = self.on_bars is not None
        self.panel = None
        self.last_ns = None  # the time of the last timestamp served to on_bars
        problem = None
        if not self.by_time:
            problem = ("ctx.panel is for on_bars strategies: on_data gets a timestamp's bars one call at a time, "
                       "so a row of the panel would show bars still to come")
        elif self.np is None:
            problem = "ctx.panel needs numpy, which the strategy had not imported when its module had loaded"
        else:
            self.panel = Panel(self.history, len(symbols), self.np)
        self.ctx = Context(symbols, self.histories, msg["params"], float(msg["cash"]), msg["artifacts"], self.state,
                           self.chan, self.by_time, self.panel, problem)
        # The cash as the executions left it. ctx.cash is the strategy's to
        # read, and to overwrite if it likes: a fill made here is the
        # market's, from this.
        self.cash = float(msg["cash"])
        # Calls of one batch start only within this many nanoseconds of its
        # arrival; then the bridge yields after the call in flight.
        self.budget_ns = int(float(msg["budget_ms"]) * 1e6)
        # The market, when the host lets the bridge deliver simple fills
        # itself (on_data strategies: _take_order with one symbol,
        # _plan_local with several).
        self.local = None
        local = msg.get("local")
        if isinstance(local, dict) and symbols and not self.by_time:
            slip, fee = float(local["slippage_bps"]), float(local["fee_bps"])
            self.local = (1 + slip / 10_000, 1 - slip / 10_000, fee, bool(local["allow_short"]))
        # What the fills delivered here since the last yield may take in
        # frames (their commands and the yield's records): the bridge
        # yields instead of delivering one more past it.
        self.local_max = int(local.get("max_bytes", 0)) if self.local is not None else 0
        self.local_cost = _LOCAL.size + 16 + 5 + _COMMAND.size + max((len(sym.encode()) for sym in symbols), default=0)
        self.local_bytes = 0
        self.fills = []  # the fills of this batch the bridge delivered itself (_LOCAL records)
        self.carried = 0  # command frames of those fills' orders

    def run_batch(self, payload):
        """Serves one batch frame: its executions, then its bars, until the
        end, a call that issued commands, the budget or a stop request; then
        yields. Returns False when a hook failed (the error is sent)."""
        clock = time.perf_counter_ns
        budget_end = clock() + self.budget_ns
        call, n, nsym, nexec, resumed, ngroups = _BATCH_HEAD.unpack_from(payload, 0)
        first = call
        off = _BATCH_HEAD.size
        # Bars per symbol among the new ones (the frame carries bars resumed..n).
        counts = payload[off : off + 4 * nsym].cast("I").tolist()
        off += 4 * nsym
        execs, off = self._decode_executions(payload, off, nexec)
        off += (-off) % 8
        syms, base, groups = self._extend_histories(payload, off, n, nsym, resumed, counts, ngroups)
        durations = []
        if self.fills or self.carried:
            self.fills, self.carried, self.local_bytes = [], 0, 0
        self.state[LOCAL] = 0
        call, outcome = self._deliver_executions(execs, call, durations, budget_end)
        if outcome is not None:
            self._keep(syms, base, 0)
            return outcome if outcome is False else self._yield(call - 1, durations, outcome == "stopped")
        ordered = False
        if self.by_time:
            calls, served, ok = self._run_groups(syms, base, groups, call, durations, budget_end)
        elif syms is None:
            served, ok = self._run_bars_one_symbol(n, call, durations, budget_end)
            # Its bars, and the on_execution calls of the fills it delivered
            # itself: every call that ran has its duration.
            calls = first + len(durations) - call
        else:
            served, ok, ordered = self._run_bars(syms, base, n, call, durations, budget_end)
            calls = first + len(durations) - call
        if not ok:
            return False
        self._keep(syms, base, served)
        # A yield whose last call ordered is not a stop's (the host plays
        # the order out first), as when the order had stopped the loop.
        stopped = bool(self.state[STOP]) and not self.ctx._issued and not ordered
        return self._yield(call + calls - 1, durations, stopped)

    def _decode_executions(self, payload, off, nexec):
        """Decodes the batch's execution records: (ExecRecord, symbol, reason) each."""
        execs = []
        symbols = self.ctx._symbols
        for _ in range(nexec):
            rec = ExecRecord._make(_EXEC.unpack_from(payload, off))
            off += _EXEC.size
            reason = bytes(payload[off : off + rec.reason_len]).decode("utf-8", "replace")
            off += rec.reason_len
            if rec.symbol >= 0:
                symbol = symbols[rec.symbol]
            else:
                symbol = bytes(payload[off : off + rec.name_len]).decode("utf-8", "replace")
            off += rec.name_len
            execs.append((rec, symbol, reason))
        return execs, off

    def _extend_histories(self, payload, off, n, nsym, resumed, counts, ngroups):
        """Adds the batch's new bars to the histories (and the panels) and
        returns the event order of the bars to serve: symbol indexes, the
        batch's being syms[base:base+n] (syms None with one symbol and
        on_data, whose bars to serve are those past its history's `end`);
        and, for on_bars, the sizes of the timestamps' groups of bars to
        serve. A batch of held bars only is served from the held list in
        place (its bars, then those it does not reach, stay where they
        are); the held list is copied only when new bars follow it.

        The first `resumed` bars are ones this worker already holds: the rest
        of the previous batch, which it stopped early to yield. The new bars
        follow as columns, each grouped by symbol (symbol 0's bars, then
        symbol 1's, ...): time int64, open, high, low, close, volume float64;
        then, with several symbols, their event order as int32 symbol indexes;
        then the groups' sizes as uint32, which cover the resumed bars too.
        """
        histories = self.histories
        held = self.held_count
        panel = self.panel
        if resumed > held or n > resumed and resumed not in (0, held):
            raise ValueError("host resumed %d bars of %d held, with %d new" % (resumed, held, n - resumed))
        if not resumed:
            for hist in histories:
                hist.drop_held()
            if panel is not None:
                panel.drop_held()
        m = n - resumed
        goff = off + 48 * m + (4 * m if nsym > 1 else 0)
        groups = payload[goff : goff + 4 * ngroups].cast("I").tolist()
        if self.by_time and sum(groups) != n:
            raise ValueError("host sent timestamp groups of %d bars for a batch of %d" % (sum(groups), n))
        new_syms = None
        if m:
            col = 8 * m
            np = self.np
            if np is None:
                t = payload[off : off + col].cast("q")
                cols = [payload[off + k * col : off + (k + 1) * col].cast("d") for k in range(1, 6)]
            else:
                t = np.frombuffer(payload, dtype=np.int64, count=m, offset=off)
                cols = [np.frombuffer(payload, dtype=np.float64, count=m, offset=off + k * col) for k in range(1, 6)]
            keep = resumed > 0
            if nsym == 1:
                histories[0].extend(t, *cols, keep)
                if self.by_time:
                    new_syms = [0] * m
            else:
                new_syms = payload[off + 6 * col : off + 6 * col + 4 * m].cast("i").tolist()
                start = 0
                for k, cnt in enumerate(counts):
                    if cnt:
                        end = start + cnt
                        histories[k].extend(t[start:end], *[c[start:end] for c in cols], keep)
                        start = end
            if panel is not None:
                # The new bars' groups: those past the resumed bars'.
                skip, total = 0, 0
                while total < resumed:
                    total += groups[skip]
                    skip += 1
                panel.extend(np.array(groups[skip:], dtype=np.int64), np.array(new_syms, dtype=np.int64), cols, keep)
        if nsym == 1 and not self.by_time:
            return None, 0, groups
        if not m and resumed:
            return self.held_syms, self.held_from, groups
        kept = self.held_syms[self.held_from :] if resumed else []
        return kept + (new_syms or []), 0, groups

    def _deliver_executions(self, execs, call, durations, budget_end):
        """Applies each execution to the portfolio and calls on_execution.
        Returns the next call number and None to go on to the bars, "yield"
        or "stopped" to yield first, or False when a hook failed."""
        ctx = self.ctx
        state = self.state
        clock = time.perf_counter_ns
        on_execution = self.on_execution
        for rec, symbol, reason in execs:
            ctx._open.discard(rec.order_id)
            ctx.cash = self.cash = rec.cash
            # A rejection can name a symbol that is not in the data (or none,
            # for a cancel of an unknown order): no position changes then.
            if rec.symbol >= 0:
                ctx._positions[symbol] = rec.position
            if on_execution is None:
                continue
            if state[STOP]:
                return call, "stopped"
            if rec.symbol >= 0:
                ctx._focus(rec.symbol)
            ctx._time_ns = rec.time
            state[CLOCK] = 2 * call - 1
            t0 = clock()
            try:
                on_execution(ctx, Execution(rec.order_id, symbol, _SIDES[rec.side], rec.qty, rec.price, rec.fee,
                                            _STATUSES[rec.status], reason, rec.time))
            except BaseException as exc:
                self.fail(call, "on_execution", exc, durations)
                return call, False
            t1 = clock()
            durations.append(t1 - t0)
            state[CLOCK] = 2 * call
            call += 1
            if ctx._issued or t1 >= budget_end:
                return call, "yield"
        ctx._time_ns = None
        return call, None

    # The two bar loops are the hot path: per bar, advance the symbol's
    # window, publish the call clock, time the call; everything else is built
    # only on demand. They are separate because with one symbol (the common
    # case) there is no symbol to look up and no focus to move per bar, which
    # is a measurable share of a loop this short. Each returns the number of
    # bars served and False when a hook failed (the error is sent).

    def _run_bars_one_symbol(self, n, call, durations, budget_end):
        ctx, state, on_data = self.ctx, self.state, self.on_data
        clock, record = time.perf_counter_ns, durations.append
        hist = self.histories[0]
        ctx._focus(0)
        start = hist.end
        last = start + n  # the row after the batch's last bar
        # The clock is written once a call: 2k-1 as call k starts, 2k once
        # the last call returned (between two calls of this loop it still
        # names the one that returned, for the nanoseconds until the next).
        clock_word = 2 * call - 1
        # A stop request is looked for before the first call, then after a
        # call once `look` has passed: at most _STOP_POLL_NS apart, with the
        # budget's own check (a look at the state page before every call
        # was an eighth of this loop's cost per bar). A stop ends the batch
        # after the call in flight and at most a millisecond of calls.
        if state[STOP]:
            n = 0
        look = min(budget_end, clock() + _STOP_POLL_NS)
        for _ in range(n):
            hist.end += 1
            state[CLOCK] = clock_word
            t0 = clock()
            try:
                on_data(ctx, hist)
            except BaseException as exc:
                self.fail((clock_word + 1) >> 1, "on_data", exc, durations)
                return hist.end - 1 - start, False
            t1 = clock()
            record(t1 - t0)
            clock_word += 2
            if ctx._issued or t1 >= look:
                if state[STOP]:
                    break
                if not ctx._issued and t1 < budget_end:
                    look = min(budget_end, t1 + _STOP_POLL_NS)
                    continue
                state[CLOCK] = clock_word - 1
                # The order's fill delivered here, when it can be, instead
                # of a round trip to the host, at the open of the next bar
                # (which this batch holds), as the host's market would make
                # it (_take_order says when it can); also when the call
                # that ordered ended past the budget, up to a quarter of a
                # budget later (the fill's calls then start past it, within
                # the host's slack: engine/watchdog.go). The host makes the
                # same fill from the order when the yield reaches it, and
                # checks that it is the one delivered here (the _LOCAL
                # records of the yield): nothing the worker says decides
                # the market.
                if (t1 >= budget_end and (not ctx._issued or t1 >= budget_end + (self.budget_ns >> 2))
                        or hist.end == last or self.local is None):
                    break
                fill = self._take_order(0)
                if fill is None:
                    break
                call = (clock_word + 1) >> 1
                answered = self._deliver(call - 1, fill, call, durations, budget_end)
                if answered is False:
                    return hist.end - start, False
                call, go_on = answered
                clock_word = 2 * call - 1
                if not go_on or state[STOP]:
                    break
        state[CLOCK] = clock_word - 1
        return hist.end - start, True

    def _take_order(self, k):
        """Takes the call's order, when the bridge may deliver its fill
        itself, at the open of symbol k's next row: a market order, the
        call's only command, on symbol k (the bar's, not ctx.symbol, which
        the strategy may assign), with no other order open, and a fill (a
        rejection is left to the host, which words it). Its command frame
        is then carried by the yield, delivered or not. Returns the fill,
        or None: the order, then price, fee, cash and position after it,
        and time. The cash is the bridge's own, as the executions left it;
        the float operations are the host's, in its order (backtest/doc.go)."""
        ctx = self.ctx
        order = ctx._market
        if order is None or ctx._issued != 1 or len(ctx._open) != 1 or self.local_bytes >= self.local_max:
            return None
        op, symbol, qty, oid = order
        if symbol != ctx._symbols[k] or not qty > 0:
            return None
        buy_factor, sell_factor, fee_bps, allow_short = self.local
        hist = self.histories[k]
        j = hist.end  # the next bar's row
        cash = self.cash
        position = ctx._positions.get(symbol, 0)
        if op == OP_BUY:
            price = float(hist.o[j]) * buy_factor
            notional = qty * price
            fee = abs(notional) * fee_bps / 10_000
            if notional + fee > cash:
                return None
            cash -= notional + fee
            position = position + qty
        else:
            price = float(hist.o[j]) * sell_factor
            notional = qty * price
            fee = abs(notional) * fee_bps / 10_000
            if not allow_short and qty > position * (1 + _QTY_EPSILON):
                return None
            cash += notional - fee
            position = position - qty
        if abs(position) <= _QTY_EPSILON * qty:
            position = 0.0
        self.carried += 1
        self.local_bytes += self.local_cost
        ctx._issued, ctx._market = 0, None
        return oid, op, symbol, qty, price, fee, cash, float(position), int(hist.t[j])

    def _deliver(self, order_call, fill, call, durations, budget_end):
        """Delivers a fill (_take_order) of the order order_call placed, as
        call: records it for the yield (a _LOCAL record), applies it to
        the portfolio and calls on_execution. Returns False when
        on_execution failed (the error is sent), else the next call and
        whether the batch goes on (not when on_execution issued commands,
        or the budget has passed)."""
        ctx = self.ctx
        oid, op, symbol, qty, price, fee, cash, position, t = fill
        self.fills.append(_LOCAL.pack(order_call, oid, price, fee, cash, position, t))
        ctx._open.discard(oid)
        ctx.cash = self.cash = cash
        ctx._positions[symbol] = position
        on_execution = self.on_execution
        if on_execution is None:
            return call, True
        state = self.state
        m = 2 * len(self.fills)
        state[LOCAL] = m + 1
        state[CLOCK] = 2 * call - 1
        ctx._time_ns = t
        clock = time.perf_counter_ns
        t0 = clock()
        try:
            on_execution(ctx, Execution(oid, symbol, _SIDES[op], qty, price, fee, "filled", "", t))
        except BaseException as exc:
            self.fail(call, "on_execution", exc, durations)
            return False
        t1 = clock()
        durations.append(t1 - t0)
        state[CLOCK] = 2 * call
        state[LOCAL] = m
        ctx._time_ns = None
        return call + 1, not ctx._issued and t1 < budget_end

    def _run_bars(self, syms, base, n, call, durations, budget_end):
        """The bar loop of on_data with several symbols. After a call whose
        only command is a market order on its own symbol, the loop goes on
        when it can deliver that order's fill itself (_plan_local): through
        the other symbols' bars up to the symbol's next bar, where it
        delivers the fill (on_execution first), as the host's market
        would have. Any other command, a stop or the budget ends the loop
        before that bar: the order then goes to the host with the yield,
        its fill not delivered. Returns the bars served, False when a hook
        failed (the error is sent), and whether the last call's order is
        one the loop planned to go on past and did not (a stop came
        first): the yield then carries it as that call's command."""
        ctx, state, on_data = self.ctx, self.state, self.on_data
        clock, record = time.perf_counter_ns, durations.append
        histories, focus = self.histories, ctx._focus
        local = self.local
        served = 0
        clock_word = 2 * call - 1
        due = None  # the planned fill: at syms[due[0]], before its bar
        end = base + n
        for pos in range(base, end):
            k = syms[pos]
            if state[STOP]:
                break
            if due is not None and pos == due[0]:
                focus(due[1])
                answered = self._deliver(due[2], due[3], call, durations, budget_end)
                due = None
                if answered is False:
                    return served, False, False
                call, go_on = answered
                clock_word = 2 * call - 1
                if not go_on:
                    break
            hist = histories[k]
            hist.end += 1
            focus(k)
            state[CLOCK] = clock_word
            t0 = clock()
            try:
                on_data(ctx, hist)
            except BaseException as exc:
                self.fail(call, "on_data", exc, durations)
                return served, False, False
            t1 = clock()
            record(t1 - t0)
            state[CLOCK] = clock_word + 1
            clock_word += 2
            call += 1
            served += 1
            if ctx._issued or t1 >= budget_end:
                if t1 >= budget_end or local is None or due is not None or state[STOP]:
                    break
                due = self._plan_local(syms, pos, end, k, call - 1)
                if due is None:
                    break
        return served, True, due is not None and call == due[2] + 1

    def _plan_local(self, syms, pos, end, k, call):
        """Plans the fill of the order call (at syms[pos], of symbol k)
        placed, as the host's market would make it (backtest/doc.go) at
        the open of the symbol's next bar in this batch, when the bridge
        may deliver it itself (_take_order). Until that bar nothing else
        can fill and the cash and position stay as they are: the loop ends
        at any other command. Returns the plan (the bar's position in
        syms, k, call and the fill), or None when the bridge yields after
        the order's call."""
        try:
            at = syms.index(k, pos + 1, end)
        except ValueError:
            return None  # the symbol's next bar is not in this batch
        fill = self._take_order(k)
        return None if fill is None else (at, k, call, fill)

    def _run_groups(self, syms, base, groups, call, durations, budget_end):
        """The bar loop of on_bars: one call per group of bars of one
        timestamp. Per group: advance the window of each of its symbols, and
        the panels, and make `bars`, which makes a Bar only when asked.
        Returns the calls made, the bars they served and False when a hook
        failed (the error is sent)."""
        ctx, state, on_bars = self.ctx, self.state, self.on_bars
        clock, record = time.perf_counter_ns, durations.append
        histories, panel = self.histories, self.panel
        refcount = sys.getrefcount
        ctx.symbol = ctx._hist = None
        first = call
        clock_word = 2 * call - 1
        i = base
        for g in groups:
            if state[STOP]:
                break
            ks = syms[i : i + g]
            for k in ks:
                histories[k].end += 1
            if panel is not None:
                panel.end += 1
            h = histories[ks[0]]
            ctx._time_ns = self.last_ns = int(h.t[h.end - 1])
            bars = Bars(ks, ctx)
            state[CLOCK] = clock_word
            t0 = clock()
            try:
                on_bars(ctx, bars)
            except BaseException as exc:
                self.fail(call, "on_bars", exc, durations)
                return call - first, i - base, False
            t1 = clock()
            record(t1 - t0)
            state[CLOCK] = clock_word + 1
            if refcount(bars) > 2:
                # The strategy kept it (or a view of it): its bars are made
                # now, before the windows move on.
                bars._freeze()
            i += g
            clock_word += 2
            call += 1
            if ctx._issued or t1 >= budget_end:
                break
        return call - first, i - base, True

    def _keep(self, syms, base, served):
        """Remembers the bars received and not served, in event order: those
        of syms after the served ones, from base (see _extend_histories)."""
        if syms is None:
            h = self.histories[0]
            self.held_syms, self.held_from, self.held_count = None, 0, h.received - h.end
        else:
            self.held_syms, self.held_from = syms, base + served
            self.held_count = len(syms) - base - served

    def _charged(self, durations, first):
        """The durations of calls first, first+1, ...: the time spent at the
        debugger's prompt is not the call's."""
        if self.debugger is None:
            return list(durations)
        return self.debugger.charged(durations, first)

    def _yield(self, through, durations, stopped):
        ctx = self.ctx
        if self.debugger is not None:
            durations = self.debugger.charged(durations, through + 1 - len(durations))
        fills = self.fills
        self.chan.send(b"Y", _YIELD_HEAD.pack(through, 1 if stopped else 0, len(durations), ctx._issued + self.carried,
                                              len(fills))
                       + array.array("Q", durations).tobytes() + b"".join(fills))
        self.chan.answered()
        ctx._issued, ctx._market = 0, None
        if fills or self.carried:
            self.fills, self.carried, self.local_bytes = [], 0, 0
        return True

    def finish(self, msg):
        call = msg["call"]
        ctx = self.ctx
        # on_finish's time is the last event's: with on_bars, the last timestamp's.
        ctx._time_ns = self.last_ns if self.by_time else None
        fn = self.hooks.get("on_finish")
        state = self.state
        state[CLOCK] = 2 * call - 1
        t0 = time.perf_counter_ns()
        try:
            result = fn(ctx) if fn else None
            if result is not None and not isinstance(result, dict):
                raise TypeError("on_finish must return a dict or None, got %s" % type(result).__name__)
            payload = json.dumps({"call": call, "duration_ns": self._charged([time.perf_counter_ns() - t0], call)[0],
                                  "metadata": result},
                                 separators=(",", ":"), allow_nan=False)
        except BaseException as exc:
            self.fail(call, "on_finish", exc)
            return False
        state[CLOCK] = 2 * call
        self.chan.send(b"D", payload.encode())
        self.chan.answered()
        return True

    def serve(self):
        try:
            if self.debugger is not None:
                self.debugger.install()
            manifest = self.load()
        except BaseException as exc:
            self.fail(0, "startup", exc)
            return 1
        self.chan.send_json(b"M", manifest)
        while True:
            kind, payload = self.chan.recv()
            if kind == b"B":
                if not self.run_batch(payload):
                    return 1
            elif kind == b"I":
                self.init(json.loads(bytes(payload)))
                self.chan.send_json(b"R", {})
            elif kind == b"F":
                if not self.finish(json.loads(bytes(payload))):
                    return 1
            elif kind == b"Q":
                return 0
            else:
                raise ValueError("unknown frame type %r from host" % kind)


def forbid_exec():
    """In the sandbox: stacks the seccomp filter the launcher hands over in
    STRATBENCH_SANDBOX_EXEC_FILTER (hex struct sock_filter records), which
    makes execve and execveat fail with EPERM, and removes the variable.
    Landlock has to let the kernel execute the dynamic loader, so until then
    "ld.so ./file" or an ELF in a memory file would run. Returns None, or why
    the filter is not in force; the caller must then not run the strategy.
    Outside the sandbox the variable is absent and nothing happens."""
    value = os.environ.pop("STRATBENCH_SANDBOX_EXEC_FILTER", None)
    if value is None:
        return None
    try:
        import ctypes
        import errno

        raw = bytes.fromhex(value)
        if not raw or len(raw) % 8 or len(raw) > 8 * 4096:
            return "exec filter: %d bytes is not a seccomp program" % len(raw)

        class SockFprog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        libc = ctypes.CDLL(None, use_errno=True)
        program = ctypes.create_string_buffer(raw, len(raw))
        fprog = SockFprog(len(raw) // 8, ctypes.addressof(program))
        # No thread sync is needed: the sandbox refuses clone, so this is the
        # only thread. no_new_privs was set by the launcher.
        PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
        prctl = libc.prctl
        prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
        if prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
            return "exec filter: prctl(PR_SET_SECCOMP): " + os.strerror(ctypes.get_errno())
        # Verify rather than trust: execve("") fails with ENOENT in the kernel,
        # with EPERM when the filter refuses it first.
        argv = (ctypes.c_char_p * 2)(b"", None)
        execve = libc.execve
        execve.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p]
        ctypes.set_errno(0)
        execve(b"", argv, argv)
        if ctypes.get_errno() != errno.EPERM:
            return "exec filter: installed, but execve is not refused (%s)" % os.strerror(ctypes.get_errno())
    except Exception as exc:  # no ctypes, a malformed value: refuse, never run unconfined
        return "exec filter: %s: %s" % (type(exc).__name__, exc)
    return None


# --- Warm template (supervisor/template.go is the host's half) -------------
#
# `bridge.py --template SOCKET_FD --fds R,A,S,C,DI,DO STRATEGY` imports what the
# strategy's leading imports name, from outside the strategy's folder, then
# forks one run per request of the host. A run goes on as a cold start of
# `bridge.py --fds R,A,S,C,DI,DO STRATEGY` would, from the moment the bridge
# loads the strategy: the strategy's module is imported only in the run.
#
# Requests come on a SOCK_SEQPACKET socket, one JSON object per packet, with
# SCM_RIGHTS descriptors: the run's stdout and stderr, stratbench's
# executable, the control socket of the run's init, the run's go pipe, then
# the run's extra files (R, A, S, C, DI, DO). For each, a child of the template (A)
# unshares a PID namespace (through a user namespace when it must) and forks
# its first process (B), writes B's pid to the template and exits. B forks
# the run (C); once C is set up, B executes stratbench as the run's init.
# C waits for the host's go byte before it returns to main() as the run.

_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNS = 0x00020000
_CLONE_NEWIPC = 0x08000000
_PR_SET_DUMPABLE = 4
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REC, _MS_PRIVATE = 2, 4, 8, 1 << 14, 1 << 18
_MS_BIND = 1 << 12
_MAX_REQUEST = 128 << 10
_FORK_FIXED_FDS = 5  # stdout, stderr, executable, init control, go
_CAP_VERSION_3 = 0x20080522
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4


class _Refusal(Exception):
    """The template cannot start, or cannot fork this run."""


class _Stale(_Refusal):
    """The strategy's leading imports are no longer those the template
    imported for: a new template would import others (the host starts one
    and forks the run from it)."""


def template_main(args):
    """Serves as a warm template. Returns the exit code in the template,
    and the run's command line (a list) in a run forked from it."""
    # What a cold start has imported when it loads the strategy: a run
    # finds everything else already imported, so none of it may be
    # shadowed by the strategy's folder.
    cold = frozenset(sys.modules)
    env = _exec_environ()
    if len(args) != 4 or args[1] != "--fds":
        sys.stderr.write("usage: bridge.py --template SOCKET_FD --fds R,A,S,C,DI,DO STRATEGY\n")
        return 2
    if "STRATBENCH_SANDBOX_EXEC_FILTER" in os.environ:
        sys.stderr.write("stratbench template: the sandbox forbids fork, so a sandboxed worker cannot be a "
                         "template: sandboxed runs start cold\n")
        return 2
    sys.stdout.reconfigure(line_buffering=True, errors="backslashreplace")
    sys.stderr.reconfigure(line_buffering=True, errors="backslashreplace")
    run_fds = tuple(int(fd) for fd in args[2].split(","))
    # The command line a cold start has while it imports: a module that
    # reads sys.argv (or sys.orig_argv, the interpreter's whole command
    # line) at import sees the same.
    sys.argv = [_BRIDGE_FILE] + args[1:]
    orig = getattr(sys, "orig_argv", None)
    if isinstance(orig, list) and orig[len(orig) - len(args) - 1:] == ["--template"] + args:
        sys.orig_argv = orig[:len(orig) - len(args) - 1] + args[1:]
    return Template(int(args[0]), run_fds, args[3], cold, env).serve()


def _exec_environ():
    """The environment this process was started with (/proc/self/environ),
    before the interpreter changed it (PEP 538 sets LC_CTYPE when it
    coerces the C locale), as a dict; else os.environ's."""
    try:
        with open("/proc/self/environ", "rb") as f:
            block = f.read()
    except OSError:
        return dict(os.environ)
    return dict(os.fsdecode(kv).split("=", 1) for kv in block.split(b"\0") if b"=" in kv)


def _leading_imports(tree):
    """The import statements a cold start runs before any other statement of
    the strategy's module, each as a list of (module, required): the
    module's docstring, then imports and `try:` blocks of imports only, up
    to the first other statement. Code that runs before an import (setting
    an environment variable, say) may change what it does, and an import
    in a function or an `if` may never run: those are left to the run."""
    import ast

    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    out = []
    for stmt in body:
        names = _import_names(stmt)
        if names is not None:
            out.append(names)
            continue
        if not isinstance(stmt, ast.Try):
            break
        inner = [_import_names(s) for s in stmt.body]
        if any(names is None for names in inner):
            break
        out.extend(inner)
        if stmt.orelse or stmt.finalbody:
            break
    return out


def _import_names(stmt):
    import ast

    if isinstance(stmt, ast.Import):
        return [(alias.name, True) for alias in stmt.names]
    if isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module:
        if stmt.module == "__future__":
            return []
        # `from a import b`: b may be a submodule, imported if it is one.
        return [(stmt.module, True)] + [(stmt.module + "." + alias.name, False)
                                        for alias in stmt.names if alias.name != "*"]
    return None


def _shadowable(name):
    """A built-in or frozen module is found before any folder of sys.path."""
    if name in sys.builtin_module_names:
        return False
    try:
        return importlib.machinery.FrozenImporter.find_spec(name) is None
    except (ImportError, ValueError):
        return True


def _shadowed(name, entries):
    """Whether a file or folder in the strategy's folder (entries: its names)
    would be imported as the top-level module name."""
    if not _shadowable(name):
        return False
    return name in entries or any(name + suffix in entries for suffix in importlib.machinery.all_suffixes())


def _place(targets):
    """Puts each source descriptor at its target number (targets maps target
    to source), whatever the overlaps, inheritable, and closes the sources."""
    top = max(list(targets) + list(targets.values())) + 1
    moved = {target: fcntl.fcntl(src, fcntl.F_DUPFD_CLOEXEC, top) for target, src in targets.items()}
    for src in set(targets.values()):
        if src not in targets:
            os.close(src)
    for target, src in moved.items():
        os.dup2(src, target)
        os.close(src)


def _write_file(path, text):
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _reseed():
    """Gives a run what a cold start's imports make afresh in each process
    and a run forked from the template would otherwise share with every
    other run of it: the template's were made once, when it imported them.
    The standard library's random reseeds itself at every fork
    (os.register_at_fork); numpy's global generator does not.
    multiprocessing draws its authentication key from os.urandom at import:
    shared, one run could authenticate to another's managers and listeners.
    logging's start time, which a record's relativeCreated counts from, is
    the import's (an int of nanoseconds from Python 3.13 on)."""
    np_random = sys.modules.get("numpy.random")
    if np_random is not None:
        np_random.seed()
    mp_process = sys.modules.get("multiprocessing.process")
    if mp_process is not None:
        mp_process.current_process().authkey = os.urandom(32)
    logging = sys.modules.get("logging")
    if logging is not None and isinstance(getattr(logging, "_startTime", None), (int, float)):
        logging._startTime = time.time_ns() if isinstance(logging._startTime, int) else time.time()


# What a process reads there is its own or the kernel's of the moment, not a
# file whose changes a signature would show.
_PSEUDO_FILES = ("/proc/", "/sys/", "/dev/")


def _signature(path):
    """What changes when path's content (a file) or entries (a folder) do:
    its identity, size and times (ctime too, which no one can set), or None
    when it does not exist."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns


class _FinderWatch:
    """Stands for a meta path finder while the template imports: finds what
    it finds, notes the name looked up, and refuses a module of the
    strategy's folder (_Watch.found)."""

    def __init__(self, watch, finder):
        self._watch, self._finder = watch, finder

    def find_spec(self, name, path=None, target=None):
        return self._watch.found(name, self._finder.find_spec(name, path, target))

    def __getattr__(self, name):
        return getattr(self._finder, name)


class _Watch:
    """What the template's imports do (Template.preload), so that a run
    forked from it behaves as a cold start, or the template refuses to
    serve (taint) or to fork (Template.check_inherited).

    While the template imports, every meta path finder is watched: each
    name looked up is noted (a file of that name put in the strategy's
    folder later would make a cold start import it: check_shadows), and a
    module found in the folder is refused (ImportError) and taints the
    template: a cold start would import it, the template does not run its
    code. open and the os functions that read, list or write a path, or
    start a process, are wrapped: a write in the strategy's folder, a
    change of the working folder or a process started (what it reads is
    not seen) taints the template; every other path is noted, and its
    signature checked at each fork (signatures). The wrapped functions are
    put back afterwards, also where an import took a reference to one
    (`from os import stat`) in its module. Code that reads a file without
    Python's functions (a C extension's own fopen) is not seen."""

    _READS = ("stat", "lstat", "access", "listdir", "scandir", "readlink")
    _WRITES = ("mkdir", "remove", "unlink", "rmdir", "truncate", "utime", "chmod", "chown", "mkfifo", "mknod")
    _WRITES2 = ("rename", "replace", "symlink", "link")
    _SPAWNS = ("system", "fork", "forkpty", "posix_spawn", "posix_spawnp", "execv", "execve")
    _WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

    def __init__(self, template):
        self.t = template
        self.active = False  # while an import runs (not the watch's own calls)
        self.probing = False  # while a leading import is looked up
        self.importing = None  # the leading import under way
        self.taint = None  # why the template cannot serve
        self.looked_up = set()  # top-level names
        self.paths = set()
        self.patched = []  # (owner, name, original, wrapper)
        self.before = frozenset()  # sys.modules before the imports
        self.cached = frozenset()  # sys.path_importer_cache's keys before them

    def tainted(self, why):
        if self.taint is None:
            self.taint = why

    def found(self, name, spec):
        self.looked_up.add(name.partition(".")[0])
        active, self.active = self.active, False  # in_folder's own calls are not the import's
        try:
            if spec is None or self.probing or not self.t.in_folder(spec):
                return spec
        finally:
            self.active = active
        self.tainted("importing %s imports %s, which the strategy's folder holds: a run forked from the template "
                     "would not import it as a cold start does" % (self.importing, name))
        raise ImportError("stratbench template: %s is the strategy's own module, not imported here" % name, name=name)

    def start(self):
        import builtins
        import io

        self.before = frozenset(sys.modules)
        self.cached = frozenset(sys.path_importer_cache)
        self.wrap_finders()
        opened = self.wrap(builtins.open, self.open_paths)
        self.patch(builtins, "open", opened)
        self.patch(io, "open", opened)
        self.patch(io, "open_code", self.wrap(io.open_code, lambda a, k: ("read", a[:1])))
        self.patch(os, "open", self.wrap(os.open, self.os_open_paths))
        self.patch(os, "chdir", self.wrap(os.chdir, lambda a, k: ("chdir", ())))
        self.patch(os, "fchdir", self.wrap(os.fchdir, lambda a, k: ("chdir", ())))
        for name in self._READS:
            self.patch(os, name, self.wrap(getattr(os, name), lambda a, k: ("read", a[:1] or [k.get("path", ".")])))
        for name in self._WRITES:
            if hasattr(os, name):
                self.patch(os, name, self.wrap(getattr(os, name), lambda a, k: ("write", a[:1] or [k.get("path")])))
        for name in self._WRITES2:
            self.patch(os, name, self.wrap(getattr(os, name),
                                           lambda a, k: ("write", a[:2] or [k.get("src"), k.get("dst")])))
        for name in self._SPAWNS:
            if hasattr(os, name):
                self.patch(os, name, self.wrap(getattr(os, name), lambda a, k: ("spawn", ())))
        # subprocess (and multiprocessing's spawn) start processes through
        # _posixsubprocess, which they import: the template's (imported
        # before the strategy's folder was on sys.path) is watched there.
        posixsubprocess = sys.modules.setdefault("_posixsubprocess", self.t.posixsubprocess)
        self.patch(posixsubprocess, "fork_exec", self.wrap(posixsubprocess.fork_exec, lambda a, k: ("spawn", ())))

    def wrap_finders(self):
        """Watches the meta path finders not yet watched: also those an
        import added (each leading import calls it again)."""
        for i, finder in enumerate(sys.meta_path):
            if not isinstance(finder, _FinderWatch) and callable(getattr(finder, "find_spec", None)):
                sys.meta_path[i] = _FinderWatch(self, finder)

    def stop(self):
        self.active = False
        sys.meta_path[:] = [f._finder if isinstance(f, _FinderWatch) else f for f in sys.meta_path]
        originals = {}  # wrapper -> original (a function hashes by identity)
        for owner, name, original, wrapper in reversed(self.patched):
            if getattr(owner, name, None) is wrapper:
                setattr(owner, name, original)
            originals[wrapper] = original
        if "_posixsubprocess" not in self.before and "subprocess" not in sys.modules:
            sys.modules.pop("_posixsubprocess", None)  # only the watch imported it
        module_type, function_type = type(sys), type(_signature)
        for name in set(sys.modules) - self.before:
            module = sys.modules.get(name)
            if not isinstance(module, module_type):
                continue
            namespace = module.__dict__
            taken = [key for key, value in namespace.items() if type(value) is function_type and value in originals]
            for key in taken:
                namespace[key] = originals[namespace[key]]
            spec, file = namespace.get("__spec__"), namespace.get("__file__")
            if spec is not None and self.t.in_folder(spec) or \
                    isinstance(file, str) and os.path.isabs(file) and self.t.in_folder_path(file):
                self.tainted("the template's imports loaded %s from the strategy's folder" % name)

    def patch(self, owner, name, wrapper):
        self.patched.append((owner, name, getattr(owner, name), wrapper))
        setattr(owner, name, wrapper)

    def wrap(self, fn, paths):
        """fn, noting what it does to paths (a function of its arguments
        giving the kind of access and the paths) while an import runs."""
        watch = self

        def watched(*args, **kwargs):
            if watch.active:
                watch.active = False  # what saw calls is not the import's
                try:
                    kind, given = paths(args, kwargs)
                    watch.saw(kind, given, kwargs.get("dir_fd"))
                except Exception as exc:
                    watch.tainted("the template could not tell what %s(...) did: %s: %s"
                                  % (fn.__name__, type(exc).__name__, exc))
                finally:
                    watch.active = True
            return fn(*args, **kwargs)

        return self.t.functools.wraps(fn)(watched)

    @staticmethod
    def open_paths(args, kwargs):
        mode = args[1] if len(args) > 1 else kwargs.get("mode", "r")
        writes = not isinstance(mode, str) or any(c in mode for c in "wax+")
        return ("write" if writes else "read"), args[:1] or [kwargs.get("file")]

    def os_open_paths(self, args, kwargs):
        flags = args[1] if len(args) > 1 else kwargs.get("flags", 0)
        writes = not isinstance(flags, int) or flags & self._WRITE_FLAGS
        return ("write" if writes else "read"), args[:1] or [kwargs.get("path")]

    def saw(self, kind, given, dir_fd):
        importing = self.importing or "a module"
        if kind == "spawn":
            self.tainted("importing %s started a process, whose reads the template cannot see" % importing)
            return
        if kind == "chdir":
            self.tainted("importing %s changed the working folder, which a run forked from the template would "
                         "inherit" % importing)
            return
        for path in given:
            path = self.absolute(path, dir_fd)
            if path is None:
                continue  # a descriptor
            if self.t.in_folder_path(path):
                if kind == "write":
                    self.tainted("importing %s wrote in the strategy's folder (%s)" % (importing, path))
                    return
            elif path.startswith(_PSEUDO_FILES):
                continue
            self.paths.add(path)

    @staticmethod
    def absolute(path, dir_fd):
        if isinstance(path, int) or path is None:
            return None
        try:
            path = os.fsdecode(os.fspath(path))
        except TypeError:
            return None
        if not os.path.isabs(path):
            # An unknown base raises: the template cannot tell (wrap).
            base = os.readlink("/proc/self/fd/%d" % dir_fd) if isinstance(dir_fd, int) else os.getcwd()
            path = os.path.join(base, path)
        return os.path.normpath(path)

    def signatures(self):
        """The signature of every path the imports read, listed or wrote,
        of the file of each module they imported, and of each folder the
        import system searched for them (sys.path_importer_cache: a module
        installed there since would change what a cold start finds; the
        strategy's folder's entries are checked by name instead,
        check_shadows)."""
        paths = set(self.paths)
        module_type = type(sys)
        for name in set(sys.modules) - self.before:
            module = sys.modules.get(name)
            spec = module.__dict__.get("__spec__") if isinstance(module, module_type) else None
            origin = getattr(spec, "origin", None)
            if isinstance(origin, str) and os.path.isabs(origin):
                paths.add(origin)
        searched = set(sys.path_importer_cache) - self.cached
        searched.update(sys.path)
        for path in searched:
            if isinstance(path, str):
                path = os.path.abspath(path)  # a relative one is the working folder's, as for the finders
                if os.path.realpath(path) != self.t.real_folder:
                    paths.add(path)
        return {path: _signature(path) for path in sorted(paths) if not path.startswith(_PSEUDO_FILES)}


class Template:
    def __init__(self, sock_fd, run_fds, strategy, cold, env):
        # Everything the template itself imports, before the strategy's
        # folder is on sys.path (preload): none of it may come from there.
        import _posixsubprocess
        import ast
        import ctypes
        import errno
        import functools
        import gc
        import importlib.machinery
        import socket
        import warnings

        self.ast, self.ctypes, self.errno, self.functools, self.gc = ast, ctypes, errno, functools, gc
        self.socket, self.warnings, self.posixsubprocess = socket, warnings, _posixsubprocess
        self.strategy = os.path.abspath(strategy)
        self.folder = os.path.dirname(self.strategy)
        self.real_folder = os.path.realpath(self.folder)
        self.cold = cold
        self.env = env  # the environment the template started with
        self.cwd = os.path.realpath(os.getcwd())
        # What the preload left for the forks to check (check_inherited):
        # the top-level names the imports looked up, and the signature of
        # every file and folder they read or searched.
        self.looked_up = frozenset()
        self.signatures = {}
        # The strategy's content the template last read, and its leading
        # imports then (check_imports).
        self.source, self.leading = None, []
        self.real_dirs = {}  # realpath's cache
        self.inside = {}  # in_folder_path's
        # The run's descriptors 3..top are held with /dev/null, so that
        # nothing the template imports opens a file there; the socket moves
        # above them.
        self.fd_list = ",".join(str(fd) for fd in run_fds)
        self.top = max(run_fds)
        fd = fcntl.fcntl(sock_fd, fcntl.F_DUPFD_CLOEXEC, self.top + 1)
        os.close(sock_fd)
        null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
        for n in range(3, self.top + 1):
            if n != null:
                os.dup2(null, n, inheritable=False)
        if not 3 <= null <= self.top:
            os.close(null)
        self.sock = socket.socket(fileno=fd)
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.prctl = self.libc.prctl
        self.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        self.mount = self.libc.mount
        self.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
        # Runs run as our uid: none may ptrace the template or open its
        # memory through /proc (a non-dumpable process's /proc files are
        # root's, and reaching into it needs CAP_SYS_PTRACE over its user
        # namespace, which a run lacks). Each fork's first process makes
        # itself dumpable again (it writes its own uid_map), and so does
        # each run.
        if self.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, "set non-dumpable: " + os.strerror(err))

        class CapHeader(ctypes.Structure):
            _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

        self.cap_header = CapHeader
        self.cap_data = ctypes.c_uint32 * 6  # two of effective, permitted, inheritable
        self.library_dirs = tuple(sorted({os.path.realpath(p) + os.sep
                                          for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}))

    # -- preloading

    def entries(self):
        """The names in the strategy's folder, or None when it cannot be listed."""
        try:
            return set(os.listdir(self.folder))
        except OSError:
            return None

    def in_folder(self, spec):
        """Whether spec's code lies in the strategy's folder (outside an
        interpreter's or a virtual environment's library in it)."""
        paths = [getattr(spec, "origin", None)] + list(getattr(spec, "submodule_search_locations", None) or [])
        return any(self.in_folder_path(path) for path in paths
                   if isinstance(path, str) and os.path.isabs(path))  # not built-in, frozen

    def realpath(self, path):
        """os.path.realpath(path), keeping each folder's: the imports ask
        about thousands of files in a few folders."""
        folder, name = os.path.split(os.path.abspath(path))
        real = self.real_dirs.get(folder)
        if real is None:
            real = self.real_dirs[folder] = os.path.realpath(folder)
        real = os.path.join(real, name)
        return os.path.realpath(real) if os.path.islink(real) else real

    def in_folder_path(self, path):
        """Whether path lies in the strategy's folder (outside a library
        folder in it); the answer is kept for the path."""
        inside = self.inside.get(path)
        if inside is None:
            real = self.realpath(path)
            inside = self.inside[path] = real == self.real_folder or real.startswith(self.real_folder + os.sep) \
                and not _installed_below(real, self.real_folder, self.library_dirs)
        return inside

    def preload(self):
        """Imports the modules of the strategy's leading imports as a cold
        start would import them (sys.path as a cold start's when it loads
        the strategy: its folder first), but none that the strategy's
        folder holds or shadows; stops at the first import that does not
        qualify or is not found (a cold start would stop there, or run code
        of its own). What the imports do is watched (_Watch): an import
        that would load a module of the strategy's folder, that writes
        there or changes the working folder, and a leading import that
        fails, make the template refuse to serve (_Refusal: the runs start
        cold), since a run forked from it would not behave as a cold start.
        Returns the names imported."""
        try:
            with open(self.strategy, "rb") as f:
                self.source = f.read()
            leading = self.leading_of(self.source)
        except (OSError, SyntaxError, ValueError):
            leading = []  # the run reports it, as a cold start does
        self.leading = leading
        entries = self.entries()
        # The modules the template imported for itself (ctypes, socket, ast,
        # ...) leave sys.modules, which is then a cold start's when it loads
        # the strategy: an import that needs one imports it afresh, as in a
        # cold start, and a run has only what the imports added. (Nothing
        # of the template imports anything from here on: its own are held.)
        for name in set(sys.modules) - self.cold:
            del sys.modules[name]
        # As a cold start's load() does: the bridge's folder off sys.path,
        # the strategy's first. It stays so, with what the imports did to
        # sys.path, and a run forked from the template does not set it
        # again (Worker.path_set).
        sys.path[0:1] = [self.folder]
        if entries is None:
            return []
        watch = _Watch(self)
        done = []
        watch.start()
        try:
            for name, required in leading:
                if self.preload_one(name, entries, required, watch):
                    done.append(name)
                elif required or watch.taint:
                    break
        finally:
            watch.stop()
        if watch.taint:
            raise _Refusal(watch.taint)
        self.looked_up = frozenset(watch.looked_up)
        self.signatures = watch.signatures()
        return done

    def leading_of(self, source):
        """The modules of source's leading imports, in order, each with
        whether it is required (_leading_imports)."""
        return [n for names in _leading_imports(self.ast.parse(source, self.strategy)) for n in names]

    def check_imports(self):
        """Refuses (_Stale) when the strategy's leading imports are no
        longer those the template imported for (an import added, removed
        or reordered since): a run forked from it would find imported what
        a cold start would not, or import itself what a new template would
        hold. The strategy is read again only to compare it with the
        content the template last saw: an unchanged file costs a read. A
        file that cannot be read or parsed now is not stale: the run fails
        on it as a cold start does, whatever the template holds."""
        try:
            with open(self.strategy, "rb") as f:
                source = f.read()
        except OSError:
            return
        if source == self.source:
            return
        try:
            leading = self.leading_of(source)
        except (SyntaxError, ValueError):
            return
        if leading != self.leading:
            raise _Stale("the strategy's leading imports changed since the template imported them (%s, now %s)"
                         % (_cut(", ".join(n for n, _ in self.leading) or "none")[:300],
                            _cut(", ".join(n for n, _ in leading) or "none")[:300]))
        self.source = source

    def preload_one(self, name, entries, required, watch):
        parts = name.split(".")
        if _shadowed(parts[0], entries):
            return False
        if not required and getattr(sys.modules.get(parts[0]), "__path__", None) is None:
            return False  # `from module import name` of a module: name is an attribute
        for i in range(1, len(parts) + 1):
            sub = ".".join(parts[:i])
            if sub in sys.modules:
                continue
            # A leading import found in the folder stops the preload, no more.
            watch.wrap_finders()
            watch.active = watch.probing = True
            try:
                spec = importlib.util.find_spec(sub)
            except (ImportError, ValueError):
                return False
            finally:
                watch.active = watch.probing = False
            if spec is None or self.in_folder(spec):
                return False
            watch.importing, watch.active = sub, True
            try:
                importlib.import_module(sub)
                failed = None
            except BaseException as exc:
                failed = exc
            finally:
                watch.active = False
            # What the import started or opened, also one that failed,
            # stays in the template, and would be in every run.
            self.check_forkable(sub)
            if failed is not None:
                # A cold start's attempt would leave what it imported and
                # did before it failed, once; a run would redo it over the
                # template's.
                watch.tainted("importing %s failed (%s: %s), and what the attempt did stays in the template"
                              % (sub, type(failed).__name__, _cut(str(failed))[:300]))
                return False
        return True

    def held(self):
        """What a fork would not give each run afresh: the Python threads
        running besides this one (a fork copies only the forking thread),
        the open descriptors, and the shared writable mappings (a run would
        share their pages, and a descriptor's offset, with every other)."""
        import _thread

        threads = _thread._count()
        threading = sys.modules.get("threading")  # not imported here: a folder may shadow it
        if threading is not None:
            threads = max(threads, len(threading.enumerate()) - 1)
        fds = set()
        for n in os.listdir("/proc/self/fd"):
            try:
                fcntl.fcntl(int(n), fcntl.F_GETFD)
            except OSError:
                continue  # the listing's own descriptor, closed by now
            fds.add(int(n))
        fds = frozenset(fds)
        shared = set()
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split(None, 5)
                if len(fields) > 1 and fields[1][1] == "w" and fields[1][3] == "s":
                    shared.add((fields[0], fields[5].strip() if len(fields) > 5 else ""))
        return threads, fds, frozenset(shared)

    def check_forkable(self, module):
        """Refuses to serve when importing module left what a fork would not
        give each run afresh (held): a thread the runs would lack (their
        calls into it would wait forever), a file or shared memory they
        would all share. A cold start makes its own; the runs start cold."""
        threads, fds, shared = self.held()
        base_threads, base_fds, base_shared = self.baseline
        if threads > base_threads:
            raise _Refusal("importing %s started a thread, which a run forked from the template would lack" % module)
        opened = sorted(fds - base_fds)
        if opened:
            try:
                what = os.readlink("/proc/self/fd/%d" % opened[0])
            except OSError:
                what = "closed since"
            raise _Refusal("importing %s left descriptor %d open (%s), which every run forked from the template "
                           "would share" % (module, opened[0], what))
        mapped = sorted(shared - base_shared)
        if mapped:
            name = mapped[0][1]
            if name in ("", "/dev/zero (deleted)"):  # how the kernel names an anonymous shared mapping
                name = "anonymous"
            raise _Refusal("importing %s mapped shared writable memory (%s), which every run forked from the "
                           "template would share" % (module, name))

    def check_shadows(self):
        """Refuses when the strategy's folder now shadows a module that a run
        would find imported, or one that the template's imports looked up
        and found elsewhere or nowhere: a cold start would find the
        folder's."""
        entries = self.entries()
        if entries is None:
            raise _Refusal("cannot list the strategy's folder %s" % self.folder)
        tops = {name.partition(".")[0] for name in set(sys.modules) - self.cold} | self.looked_up
        shadowed = sorted(top for top in tops if _shadowed(top, entries))
        if shadowed:
            raise _Refusal("the strategy's folder shadows %s, which the template imported or looked up elsewhere"
                           % ", ".join(shadowed[:20]))

    def check_inherited(self, req):
        """Refuses to fork a run that would not behave as a cold start: its
        working folder is not the one the template's imports saw, the
        strategy's folder shadows a module they imported or looked up
        (check_shadows), or a file or folder they read or searched has
        changed since. (Its environment is the host's to keep: see run.)"""
        if req["dir"] and os.path.realpath(req["dir"]) != self.cwd:
            raise _Refusal("the run's working folder %s is not the template's %s" % (req["dir"], self.cwd))
        self.check_imports()
        self.check_shadows()
        for path, signature in self.signatures.items():
            if _signature(path) != signature:
                raise _Refusal("%s changed since the template's imports read it" % path)

    # -- serving

    def send(self, obj):
        self.sock.send(json.dumps(obj, separators=(",", ":")).encode())

    def serve(self):
        gc = self.gc
        try:
            self.baseline = self.held()
            preloaded = self.preload()
            self.check_shadows()
        except _Refusal as exc:
            self.send({"error": str(exc)})
            return 1
        sys.stdout.flush()
        sys.stderr.flush()
        # The imported modules' objects move to the permanent generation:
        # the runs' collections do not touch, and copy, their pages.
        gc.collect()
        gc.freeze()
        self.send({"ready": True, "preloaded": preloaded[:1000]})
        socket = self.socket
        space = socket.CMSG_SPACE(4 * (_FORK_FIXED_FDS + self.top - 2))
        while True:
            msg, ancillary, flags, _ = self.sock.recvmsg(_MAX_REQUEST, space, socket.MSG_CMSG_CLOEXEC)
            fds = []
            for level, kind, data in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.extend(array.array("i", data[:len(data) - len(data) % 4]))
            if not msg and not fds:
                return 0  # the host closed the socket
            if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
                answer = {"id": 0, "error": "request over %d bytes or with too many descriptors" % _MAX_REQUEST}
                for fd in fds:
                    os.close(fd)
            elif not fds:  # a fork request brings the run's descriptors
                answer = self.check(msg)
            else:
                answer = self.fork(msg, fds)
            if isinstance(answer, list):
                return answer  # the run
            self.send(answer)

    def check(self, msg):
        """Answers a check request: whether a run forked now would be
        refused as stale (check_imports), so that the host starts the next
        template ahead of the run that needs it."""
        try:
            req = json.loads(msg)
            if not isinstance(req, dict) or not isinstance(req.get("id"), int) or req.get("check") is not True:
                raise ValueError("neither a fork request (it has no descriptors) nor a check")
        except ValueError as exc:
            return {"id": 0, "error": "bad request: %s" % exc}
        try:
            self.check_imports()
        except _Stale as exc:
            return {"id": req["id"], "stale": True, "error": str(exc)}
        return {"id": req["id"]}

    def request(self, msg, fds):
        req = json.loads(msg)
        if not isinstance(req, dict) or not isinstance(req.get("id"), int):
            raise ValueError("no request id")
        files = req.get("files")
        if not isinstance(files, int) or not 0 <= files <= self.top - 2:
            raise ValueError("a run gets at most %d extra files, not %r" % (self.top - 2, files))
        if len(fds) != _FORK_FIXED_FDS + files:
            raise ValueError("%d descriptors for %d extra files" % (len(fds), files))
        for key in ("args", "env", "init"):
            if not isinstance(req.get(key), list) or not all(isinstance(v, str) for v in req[key]):
                raise ValueError("%s must be a list of strings" % key)
        if not req["init"] or not all("=" in kv for kv in req["env"]) or not isinstance(req.get("dir"), str):
            raise ValueError("bad init, env or dir")
        args = req["args"]
        if len(args) != 3 or args[0] != "--fds" or args[1] != self.fd_list or os.path.abspath(args[2]) != self.strategy:
            raise ValueError("this template runs %s with --fds %s only, not %r" % (self.strategy, self.fd_list, args))
        return req

    def fork(self, msg, fds):
        """Forks one run. In the template: the answer to the host. In the run: its command line."""
        try:
            req = self.request(msg, fds)
        except ValueError as exc:
            for fd in fds:
                os.close(fd)
            return {"id": 0, "error": "bad request: %s" % exc}
        try:
            self.check_inherited(req)
            r, w = os.pipe()
            sys.stdout.flush()
            sys.stderr.flush()
            with self.warnings.catch_warnings():
                # Python 3.12+ warns at a fork of a process with threads (a
                # BLAS pool numpy started): the fork's processes exec or run
                # on the forking thread alone, and OpenBLAS resets its pool
                # at fork.
                self.warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
        except (_Refusal, OSError) as exc:
            for fd in fds:
                os.close(fd)
            return {"id": req["id"], "error": str(exc), "stale": isinstance(exc, _Stale)}
        if pid == 0:
            os.close(r)
            try:
                run = self.intermediate(req, fds, w)
            except BaseException as exc:
                try:
                    os.write(w, ("error:%s: %s" % (type(exc).__name__, exc)).encode()[:4000])
                finally:
                    os._exit(70)
            if run is not None:
                return run  # the run, from deep below
            os._exit(0)
        os.close(w)
        for fd in fds:
            os.close(fd)
        said = b""
        while True:
            chunk = os.read(r, 4096)
            if not chunk:
                break
            said += chunk
        os.close(r)
        _, status = os.waitpid(pid, 0)
        text = said.decode(errors="replace")
        if status == 0 and text.startswith("pid:"):
            return {"id": req["id"], "pid": int(text[4:])}
        if text.startswith("error:"):
            return {"id": req["id"], "error": text[6:]}
        return {"id": req["id"], "error": "the fork's intermediate process ended with status %d" % status}

    def new_pid_namespace(self):
        """Makes this process's next child the first of a new PID namespace,
        with a mount and an IPC namespace of its own (as the supervisor's
        init has: SysV objects end with the run): directly where this user
        may, else through a new user namespace that maps our uid and gid to
        themselves."""
        self.set_dumpable(1)
        flags = _CLONE_NEWPID | _CLONE_NEWNS | _CLONE_NEWIPC
        if self.libc.unshare(flags) == 0:
            return
        err = self.ctypes.get_errno()
        if err != self.errno.EPERM:
            raise OSError(err, "unshare(CLONE_NEWPID|CLONE_NEWNS|CLONE_NEWIPC): " + os.strerror(err))
        uid, gid = os.geteuid(), os.getegid()
        if self.libc.unshare(_CLONE_NEWUSER | flags) != 0:
            err = self.ctypes.get_errno()
            raise OSError(err, "unshare(CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNS|CLONE_NEWIPC): " + os.strerror(err))
        _write_file("/proc/self/uid_map", "%d %d 1\n" % (uid, uid))
        _write_file("/proc/self/setgroups", "deny")
        _write_file("/proc/self/gid_map", "%d %d 1\n" % (gid, gid))

    def set_dumpable(self, value):
        if self.prctl(_PR_SET_DUMPABLE, value, 0, 0, 0) != 0:
            err = self.ctypes.get_errno()
            raise OSError(err, "set dumpable %d: %s" % (value, os.strerror(err)))

    def mount_proc(self, req):
        """In B: gives the run a /proc of its own namespace, as the supervisor's
        init gives a cold start, so that the run sees its own processes
        there and nothing of the template's namespace, and, as asked, a
        private /dev/shm and the namespace's pid_max (supervisor/tasks.go,
        where the host found a kernel that keeps it per namespace). Best
        effort, as there: the host checks what it counts on. Then it mounts
        the run's bind mounts (req's "binds", [source, target] pairs: files
        the run sees in place of others), which are not optional: a run
        that cannot have them raises here and does not start."""
        binds = req.get("binds") or ()
        if self.mount(b"", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
            if binds:
                err = self.ctypes.get_errno()
                raise OSError(err, "make mounts private, for the run's bind mounts: " + os.strerror(err))
            return  # then no mount is safe
        self.mount(b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None)
        for source, target in binds:
            if self.mount(os.fsencode(source), os.fsencode(target), None, _MS_BIND, None) != 0:
                err = self.ctypes.get_errno()
                raise OSError(err, "bind mount %s over %s: %s" % (source, target, os.strerror(err)))
        shm = req.get("dev_shm_bytes")
        if isinstance(shm, int) and shm > 0 and os.path.isdir("/dev/shm"):
            opts = "size=%d,nr_inodes=%d,mode=1777" % (shm, max(shm // 4096, 1024))
            self.mount(b"tmpfs", b"/dev/shm", b"tmpfs", _MS_NOSUID | _MS_NODEV, opts.encode())
        pid_max = req.get("pid_max")
        if isinstance(pid_max, int) and pid_max > 0:
            try:
                _write_file("/proc/sys/kernel/pid_max", "%d\n" % pid_max)
            except OSError:
                pass

    def intermediate(self, req, fds, w):
        """In A: returns None once B runs; in the run, its command line."""
        self.new_pid_namespace()
        pid = os.fork()
        if pid == 0:
            os.close(w)
            return self.root(req, fds)
        os.write(w, b"pid:%d" % pid)
        return None

    def root(self, req, fds):
        """In B, the first process of the run's namespace: forks the run, then
        becomes the run's init. Returns only in the run."""
        self.mount_proc(req)
        sync_r, sync_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(sync_r)
            return self.run(req, fds, sync_w)
        try:
            os.close(sync_w)
            os.read(sync_r, 1)  # end of file: the run is set up (or gone)
            null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
            _place({0: null, 1: fds[0], 2: fds[1], 3: fds[3], 4: fds[2]})
            os.closerange(5, 1 << 30)
            os.set_inheritable(4, False)  # the executable: fexecve needs it open, the init does not
            env = dict(kv.split("=", 1) for kv in req["env"])
            os.execve(4, req["init"] + [str(pid)], env)
        except BaseException as exc:
            try:
                os.write(2, ("stratbench template: the run's init: %s: %s\n" % (type(exc).__name__, exc)).encode())
            finally:
                os._exit(127)

    def run(self, req, fds, sync_w):
        """In C, the run: sets itself up as Host.Start's program would be,
        waits for the host's go and returns the run's command line."""
        try:
            os.setsid()
            extra = fds[_FORK_FIXED_FDS:]
            top = max(list(fds) + [sync_w, self.top]) + 1
            go = fcntl.fcntl(fds[4], fcntl.F_DUPFD_CLOEXEC, top)
            sync = fcntl.fcntl(sync_w, fcntl.F_DUPFD_CLOEXEC, top)
            for fd in (fds[2], fds[3], fds[4], sync_w):
                os.close(fd)
            os.close(self.sock.detach())
            null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
            targets = {0: null, 1: fds[0], 2: fds[1]}
            for i, fd in enumerate(extra):
                targets[3 + i] = fd
            _place(targets)
            for fd in range(3 + len(extra), self.top + 1):
                os.close(fd)  # a placeholder no file of the run took
            if req["dir"]:
                os.chdir(req["dir"])
            # The run's environment, over what the template's imports (and
            # the interpreter's start) made of the template's: a variable
            # the two environments share keeps what they set, as a cold
            # start's would have, and only one the run's sets otherwise
            # (the tree's marker) changes. The host forks only runs of the
            # template's environment (engine.Pool): what the imports read
            # from a variable is the template's in every run.
            env = dict(kv.split("=", 1) for kv in req["env"])
            for key in set(env) | set(self.env):
                if env.get(key) != self.env.get(key):
                    if key in env:
                        os.environ[key] = env[key]
                    else:
                        os.environ.pop(key, None)
            if os.geteuid() != 0:
                self.drop_capabilities()
            os.close(sync)  # the run's init may start
            if os.read(go, 1) != b"\x01":
                os._exit(0)  # the host gave up on the run
            os.close(go)
            # The import system's caches start as a cold start's: the
            # finders of sys.path's folders list them afresh (a module
            # installed since the template started is found, one removed
            # is not).
            sys.path_importer_cache.clear()
            importlib.invalidate_caches()
            _reseed()
            sys.argv = [_BRIDGE_FILE] + req["args"]
            return list(req["args"])
        except BaseException as exc:
            try:
                os.write(2, ("stratbench template: the run: %s: %s\n" % (type(exc).__name__, exc)).encode())
            finally:
                os._exit(127)

    def drop_capabilities(self):
        """Empties the capability sets, as the supervisor's init does for a
        program when stratbench is not root: the run's user namespace gave
        it every capability there."""
        ctypes = self.ctypes
        err = 0
        if self.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            if err != self.errno.EINVAL:
                raise OSError(err, "clear ambient capabilities: " + os.strerror(err))
        if self.libc.capset(ctypes.byref(self.cap_header(_CAP_VERSION_3, 0)), ctypes.byref(self.cap_data())) != 0:
            err = ctypes.get_errno()
            raise OSError(err, "capset: " + os.strerror(err))


def main():
    args = sys.argv[1:]
    forked = args[:1] == ["--template"]
    if forked:
        args = template_main(args[1:])
        if not isinstance(args, list):
            return args
        # A run forked from the template goes on as a cold start would,
        # with its own command line.
    problem = forbid_exec()
    if problem is not None:
        sys.stderr.write("stratbench sandbox: %s\n" % problem)
        return 121  # the launcher's exit code: the host reports why the sandbox could not start
    global FD_IN, FD_OUT, FD_STATE, FD_COMMANDS, FD_DEBUG_IN, FD_DEBUG_OUT
    if len(args) == 3 and args[0] == "--fds":
        FD_IN, FD_OUT, FD_STATE, FD_COMMANDS, FD_DEBUG_IN, FD_DEBUG_OUT = (int(fd) for fd in args[1].split(","))
        args = args[2:]
    if len(args) != 1:
        sys.stderr.write("usage: bridge.py [--fds R,A,S,C,DI,DO] STRATEGY\n")
        return 2
    # Line buffering keeps log lines in order and complete when the worker is killed.
    sys.stdout.reconfigure(line_buffering=True, errors="backslashreplace")
    sys.stderr.reconfigure(line_buffering=True, errors="backslashreplace")
    return Worker(args[0], path_set=forked).serve()


def _close_open_files():
    """Closes every file object still open but the standard streams, the
    outermost first (a text wrapper before the gzip file it writes to,
    before the buffered file under that, before its raw file), so that
    each layer's close writes what it holds into a layer still open."""
    import gc
    import _io

    keep = set()
    for f in (sys.stdin, sys.stdout, sys.stderr, sys.__stdin__, sys.__stdout__, sys.__stderr__):
        while f is not None and id(f) not in keep:
            keep.add(id(f))
            f = getattr(f, "buffer", None) or getattr(f, "raw", None)
    files = [o for o in gc.get_objects() if isinstance(o, _io._IOBase) and id(o) not in keep]
    ids = {id(o) for o in files}
    # An object a file refers to (a C wrapper's buffer or raw file, a Python
    # wrapper's attributes) lies below it: its depth is one more than the
    # deepest file above it. Depths settle after as many passes as the
    # stack is high; a cycle of references is cut at len(files) passes.
    below = {}
    for o in files:
        refs = list(gc.get_referents(o))
        attrs = getattr(o, "__dict__", None)
        if isinstance(attrs, dict):
            refs.extend(attrs.values())
        below[id(o)] = [id(r) for r in refs if id(r) in ids and r is not o]
    depth = dict.fromkeys(ids, 0)
    for _ in files:
        moved = False
        for o in files:
            for inner in below[id(o)]:
                if depth[inner] <= depth[id(o)]:
                    depth[inner], moved = depth[id(o)] + 1, True
        if not moved:
            break
    for o in sorted(files, key=lambda o: depth[id(o)]):
        try:
            o.close()
        except BaseException:  # as a finaliser: a failing close is ignored
            pass


def leave(code):
    """Ends the worker as the interpreter's own exit would, less its
    teardown: finalising every module costs 10 ms a run with numpy and
    140 ms with pandas (measured), for nothing the strategy can see. What
    a strategy may still have to do at exit is done first, in the order
    the interpreter's exit does it: the threads it left running are
    waited for (then the interpreter's own exit runs, which waits for
    them), the atexit callbacks run (multiprocessing's and logging's
    among them), and every file object still open is closed, as its
    finaliser would close it at teardown (a buffered file's last writes,
    a gzip file's trailer)."""
    # Without the threading module imported, no thread the exit would wait
    # for exists (it waits only for threading's threads).
    threading = sys.modules.get("threading")
    if not isinstance(code, int) or (
        threading is not None
        and any(t is not threading.main_thread() and t.is_alive() and not t.daemon for t in threading.enumerate())
    ):
        sys.exit(code)
    import atexit

    atexit._run_exitfuncs()  # prints a failing callback's traceback and goes on, as at exit
    _close_open_files()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


if __name__ == "__main__":
    leave(main())
