package backtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"math"
	"strconv"
	"unsafe"

	"stratbench/contract"
)

// Options are the market flags of a backtest.
type Options struct {
	Cash        float64 // starting cash (--cash), > 0
	FeeBps      float64 // fee per fill in basis points of the notional (--fee-bps), >= 0
	SlippageBps float64 // market order slippage in basis points of the price (--slippage-bps), in [0, 10000)
	AllowShort  bool    // allow sells beyond the position (--allow-short)
}

// DefaultOptions returns the flags' defaults: 100,000 cash, no fees, no
// slippage, no short selling.
func DefaultOptions() Options { return Options{Cash: 100_000} }

func (o Options) validate() error {
	finite := func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
	switch {
	case !finite(o.Cash) || o.Cash <= 0:
		return fmt.Errorf("--cash must be a finite number > 0, got %s", fmtFloat(o.Cash))
	case !finite(o.FeeBps) || o.FeeBps < 0:
		return fmt.Errorf("--fee-bps must be a finite number >= 0, got %s", fmtFloat(o.FeeBps))
	case !finite(o.SlippageBps) || o.SlippageBps < 0 || o.SlippageBps >= 10_000:
		return fmt.Errorf("--slippage-bps must be >= 0 and below 10000, got %s", fmtFloat(o.SlippageBps))
	}
	return nil
}

// Batching parameters; see Drive.
const (
	maxBatchBars       = 1 << 16 // bars per batch: about 3.4 MB of columns
	maxBatchExecutions = 1 << 12 // executions per batch
	minLookahead       = 64
	initialLookahead   = 1 << 12
)

// Driver replays bars through a worker and simulates the market: it
// implements contract.Driver. A Driver runs one replay.
type Driver struct {
	data   *Data
	window Window
	opts   Options
	lo, hi int           // the window's rows of data
	bars   contract.Bars // data's rows [lo, hi); event i is row i
	symIdx map[string]int32

	// Batching: tests shrink these.
	maxBars, maxExecs, lookahead int

	// Portfolio.
	cash      float64
	position  []float64 // by symbol
	lastClose []float64 // by symbol; 0 before the symbol's first bar
	held      []int32   // symbols with a non-zero position, ascending
	lots      [][]lot   // by symbol: open FIFO lots

	// Orders. Only open orders are kept: a closed order leaves memory, and
	// the latest closed ones are remembered for the replies to cancels.
	orders    []order         // slots of the open orders; free ones are listed in free
	free      []int32         // free slots of orders
	byID      map[int64]int32 // open order id -> slot
	open      [][]int32       // by symbol: slots of open orders, in submission order
	trig      []trigger       // by symbol: summary of open orders, for batch cuts
	openCount int
	closed    closedOrders
	lastID    int64 // the highest order id placed, when placedAny
	placedAny bool

	// Replay state and results, streamed: nothing here grows with the
	// number of events, orders or trades.
	marked      int
	exposed     int     // timestamps ending with a non-zero position
	lastEquity  float64 // after event marked-1
	curve       curveStats
	tradeStats  tradeStats
	display     displayCurve
	queue       pendingQueue
	batch       contract.Batch
	equityOut   recordFile
	tradesOut   recordFile
	ordersOut   recordFile
	cashText    []byte // the cash column of equity.csv, for cashTextOf
	cashTextOf  float64
	lastReason  string // the last rejection reason, and symbol not in the data:
	lastForeign string // the executions waiting for delivery share them
	hash        hash.Hash
	hashBuf     []byte
	firstOrder  int // event of the first order, -1 before it
	fills       int
	rejections  int
	cancels     int
	fees        float64
	buyFactor   float64
	sellFactor  float64
	driven      bool
	outcomeDone *contract.Outcome
}

// order is an open order placed by the strategy.
type order struct {
	id         int64
	symbol     int32  // index in the symbol table
	name       string // the symbol table's copy of the symbol
	buy        bool
	qty        float64
	limit      float64 // 0 for a market order
	placedTime int64   // orders fill only on bars after this time
}

// trigger summarises a symbol's open orders: a bar may fill one of them only
// if market is set, its low is at or below buyLimit or its high at or above
// sellLimit.
type trigger struct {
	market    bool
	buyLimit  float64
	sellLimit float64
}

var noTrigger = trigger{buyLimit: math.Inf(-1), sellLimit: math.Inf(1)}

// NewDriver returns a driver that replays the bars of data inside window
// with the market flags opts. Its errors are bad input: invalid options or a
// window without bars.
func NewDriver(data *Data, window Window, opts Options) (*Driver, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	lo, hi := window.rangeOf(data)
	if lo == hi {
		all := data.Info()
		return nil, fmt.Errorf("no bars in the window %s: %s covers %s to %s", window, data.source, all.From, all.To)
	}
	nsym := len(data.symbols)
	d := &Driver{
		data: data, window: window, opts: opts, lo: lo, hi: hi,
		bars:       data.bars.Slice(lo, hi),
		symIdx:     make(map[string]int32, nsym),
		maxBars:    maxBatchBars,
		maxExecs:   maxBatchExecutions,
		lookahead:  initialLookahead,
		cash:       opts.Cash,
		position:   make([]float64, nsym),
		lastClose:  make([]float64, nsym),
		lots:       make([][]lot, nsym),
		byID:       make(map[int64]int32),
		open:       make([][]int32, nsym),
		trig:       make([]trigger, nsym),
		closed:     newClosedOrders(),
		curve:      newCurveStats(opts.Cash),
		hash:       sha256.New(),
		firstOrder: -1,
		buyFactor:  1 + opts.SlippageBps/10_000,
		sellFactor: 1 - opts.SlippageBps/10_000,
	}
	for i, s := range data.symbols {
		d.symIdx[s] = int32(i)
		d.trig[i] = noTrigger
	}
	return d, nil
}

// Setup describes the replay.
func (d *Driver) Setup() contract.Setup {
	return contract.Setup{
		Data:     d.data.info(d.lo, d.hi),
		DataHash: d.data.dataHash(d.lo, d.hi),
		Cash:     d.opts.Cash,
		Flags:    d.flags(),
	}
}

// flags is the canonical text of the market flags and the window.
func (d *Driver) flags() string {
	return "cash=" + fmtFloat(d.opts.Cash) +
		" fee_bps=" + fmtFloat(d.opts.FeeBps) +
		" slippage_bps=" + fmtFloat(d.opts.SlippageBps) +
		" allow_short=" + strconv.FormatBool(d.opts.AllowShort) +
		" window=" + d.window.String()
}

// Drive replays the bars through w. Bars go in batches that end just before
// the first bar at which an open order could fill, so that fills only happen
// at a batch's first bar: the driver matches them before sending the batch
// and puts their executions first. When the worker yields early (a hook
// issued commands), the driver takes the commands in and goes on from where
// the worker stopped. equity.csv, trades.csv and orders.csv stream to rec as
// the replay goes.
func (d *Driver) Drive(ctx context.Context, w contract.Worker, rec contract.Records) error {
	if d.driven {
		return errors.New("backtest: a Driver replays once")
	}
	d.driven = true
	d.openRecords(rec)
	defer d.flushRecords()
	n := d.bars.Len()
	pos := 0         // next bar whose on_data is due
	matched := false // whether the fills at bar pos are matched
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if pos < n && !matched {
			d.match(pos)
			matched = true
		}
		if pos >= n && d.queue.len() == 0 {
			return nil
		}
		b := &d.batch
		*b = contract.Batch{FirstEvent: pos, Executions: d.queue.first(d.maxExecs)}
		if len(b.Executions) == d.queue.len() && pos < n {
			// Every waiting execution goes before the bars.
			b.Bars = d.bars.Slice(pos, d.cut(pos))
		}
		y, err := w.Run(ctx, b)
		if err != nil {
			return err
		}
		if err := checkYield(b, y); err != nil {
			return err
		}
		d.queue.drop(y.Executions)
		event := min(pos, n-1) // where commands from on_execution were placed
		if y.Bars > 0 {
			d.mark(pos, pos+y.Bars)
			event = pos + y.Bars - 1
			pos += y.Bars
			matched = false
			if y.Bars == b.Bars.Len() {
				d.lookahead = min(2*d.lookahead, d.maxBars)
			} else {
				d.lookahead = max(2*y.Bars, minLookahead)
			}
		}
		d.intake(y.Commands, event)
		if y.Stopped {
			return contract.ErrStopped
		}
		if d.queue.bytes > maxPendingBytes {
			return d.stalled(event)
		}
	}
}

// maxPendingBytes bounds the memory of the executions waiting to be
// delivered to the worker. One hook's commands fit in one protocol message
// (8 MiB: at most about 290,000 orders, whose rejections take some 45 MiB
// here); more wait only when on_execution places orders faster than their
// executions come back to it, and then they would grow without end.
const maxPendingBytes = 64 << 20

// stalled is the failure of a replay held at event by on_execution placing
// more orders than it is given executions: the executions waiting for it
// grow without end, and it would never reach the next bar.
func (d *Driver) stalled(event int) *contract.Failure {
	t := formatTime(d.bars.Time[event])
	return &contract.Failure{
		Kind: contract.KindTimeout, Hook: contract.HookOnExecution, EventIndex: &event, EventTime: &t,
		Message: fmt.Sprintf("the replay is stuck at event %d: on_execution places orders faster than their executions come back to it "+
			"(%d executions waiting, over stratbench's limit of %d MiB of them)", event, d.queue.len(), maxPendingBytes>>20),
	}
}

// pendingQueue holds the executions waiting to be delivered to the worker,
// oldest first, in chunks of maxBatchExecutions: a flood of them grows
// chunk by chunk, never copying what it holds, and delivered chunks go.
type pendingQueue struct {
	chunks [][]contract.Execution // chunks[0][head:] is the front
	head   int
	n      int
	bytes  int                  // memory of the waiting executions (see execBytes)
	spare  []contract.Execution // an emptied chunk, for the next push
}

// execBytes is the memory a waiting execution holds, its strings counted
// even when shared.
func execBytes(x *contract.Execution) int {
	return int(unsafe.Sizeof(*x)) + len(x.Symbol) + len(x.Reason)
}

func (q *pendingQueue) len() int { return q.n }

func (q *pendingQueue) push(x contract.Execution) {
	k := len(q.chunks)
	if k == 0 || len(q.chunks[k-1]) == cap(q.chunks[k-1]) {
		c := q.spare
		if c == nil {
			c = make([]contract.Execution, 0, maxBatchExecutions)
		}
		q.spare = nil
		q.chunks = append(q.chunks, c)
		k++
	}
	q.chunks[k-1] = append(q.chunks[k-1], x)
	q.n++
	q.bytes += execBytes(&x)
}

// first returns up to max of the oldest waiting executions, contiguous
// (those of the first chunk).
func (q *pendingQueue) first(max int) []contract.Execution {
	if q.n == 0 {
		return nil
	}
	c := q.chunks[0]
	return c[q.head:min(len(c), q.head+max)]
}

// drop forgets the k oldest, which were delivered.
func (q *pendingQueue) drop(k int) {
	for k > 0 {
		c := q.chunks[0]
		take := min(k, len(c)-q.head)
		for i := q.head; i < q.head+take; i++ {
			q.bytes -= execBytes(&c[i])
		}
		clear(c[q.head : q.head+take]) // their strings may go
		q.head += take
		q.n -= take
		k -= take
		if q.head < len(c) {
			return
		}
		q.head = 0
		if len(q.chunks) == 1 {
			q.chunks[0] = c[:0]
			return
		}
		q.spare = c[:0]
		q.chunks[0] = nil
		q.chunks = q.chunks[1:]
	}
}

// checkYield rejects a yield that does not fit its batch, which would
// otherwise stall or corrupt the replay.
func checkYield(b *contract.Batch, y contract.Yield) error {
	ne, nb := len(b.Executions), b.Bars.Len()
	switch {
	case y.Executions < 0 || y.Executions > ne || y.Bars < 0 || y.Bars > nb:
		return fmt.Errorf("backtest: worker yielded %d executions and %d bars of a batch of %d and %d", y.Executions, y.Bars, ne, nb)
	case y.Bars > 0 && y.Executions < ne:
		return fmt.Errorf("backtest: worker ran %d bars before delivering all %d executions", y.Bars, ne)
	case !y.Stopped && y.Executions == 0 && y.Bars == 0 && ne+nb > 0:
		return errors.New("backtest: worker yielded without progress")
	}
	return nil
}

// cut returns the end of a batch starting at bar pos: the first later bar at
// which an open order could fill, or the batch size limit.
func (d *Driver) cut(pos int) int {
	end := min(d.bars.Len(), pos+min(d.lookahead, d.maxBars))
	if d.openCount == 0 {
		return end
	}
	sym, low, high := d.bars.Symbol, d.bars.Low, d.bars.High
	for j := pos + 1; j < end; j++ {
		tr := &d.trig[sym[j]]
		if !tr.market && low[j] > tr.buyLimit && high[j] < tr.sellLimit {
			continue
		}
		for _, slot := range d.open[sym[j]] {
			if _, ok := d.fillPrice(&d.orders[slot], j); ok {
				return j
			}
		}
	}
	return end
}

// fillPrice returns the price at which o fills on bar i, if it does.
func (d *Driver) fillPrice(o *order, i int) (float64, bool) {
	if o.placedTime >= d.bars.Time[i] {
		return 0, false
	}
	open := d.bars.Open[i]
	switch {
	case o.limit == 0 && o.buy:
		return float64(open * d.buyFactor), true
	case o.limit == 0:
		return float64(open * d.sellFactor), true
	case o.buy && d.bars.Low[i] <= o.limit:
		return min(open, o.limit), true
	case !o.buy && d.bars.High[i] >= o.limit:
		return max(open, o.limit), true
	}
	return 0, false
}

// match fills (or rejects) the open orders that bar i fills, in submission order.
func (d *Driver) match(i int) {
	s := d.bars.Symbol[i]
	if len(d.open[s]) == 0 {
		return
	}
	// Resting limits the bar does not reach: nothing to look at (a
	// strategy may keep thousands of them open).
	if tr := &d.trig[s]; !tr.market && d.bars.Low[i] > tr.buyLimit && d.bars.High[i] < tr.sellLimit {
		return
	}
	kept := d.open[s][:0]
	for _, slot := range d.open[s] {
		price, ok := d.fillPrice(&d.orders[slot], i)
		if !ok {
			kept = append(kept, slot)
			continue
		}
		d.openCount--
		d.execute(slot, i, price)
	}
	d.open[s] = kept
	d.retrigger(s)
}

// execute fills the order in slot at price on bar i, or rejects it for lack
// of cash or position; either way the order closes.
func (d *Driver) execute(slot int32, i int, price float64) {
	o := &d.orders[slot]
	s := o.symbol
	notional := float64(o.qty * price)
	fee := float64(math.Abs(notional)*d.opts.FeeBps) / 10_000
	if o.buy {
		if cost := notional + fee; cost > d.cash {
			d.reject(o, i, "insufficient cash: need "+fmtFloat(cost)+", have "+fmtFloat(d.cash))
			d.closeOrder(slot, contract.ExecRejected)
			return
		}
		d.cash -= notional + fee
		d.position[s] = snapZero(d.position[s]+o.qty, o.qty)
	} else {
		if !d.opts.AllowShort && o.qty > d.position[s]*(1+qtyEpsilon) {
			d.reject(o, i, "insufficient position: selling "+fmtFloat(o.qty)+", holding "+fmtFloat(d.position[s])+" (short selling needs --allow-short)")
			d.closeOrder(slot, contract.ExecRejected)
			return
		}
		d.cash += notional - fee
		d.position[s] = snapZero(d.position[s]-o.qty, o.qty)
	}
	d.fills++
	d.fees += fee
	d.updateHeld(s)
	d.book(o, i, price, fee)
	d.emit(contract.Execution{
		OrderID: o.id, Symbol: d.data.symbols[s], Side: side(o.buy), Qty: o.qty, Price: price, Fee: fee,
		Status: contract.ExecFilled, Time: d.bars.Time[i], Event: i,
	}, i)
	d.closeOrder(slot, contract.ExecFilled)
}

func (d *Driver) reject(o *order, i int, reason string) {
	d.rejections++
	d.emit(contract.Execution{
		OrderID: o.id, Symbol: d.data.symbols[o.symbol], Side: side(o.buy), Qty: o.qty,
		Status: contract.ExecRejected, Reason: reason, Time: d.bars.Time[i], Event: i,
	}, i)
}

func side(buy bool) contract.Side {
	if buy {
		return contract.SideBuy
	}
	return contract.SideSell
}

// emit completes an execution with the portfolio after it, queues it for the
// worker and records it.
func (d *Driver) emit(x contract.Execution, event int) {
	x.Cash = d.cash
	if s, ok := d.symIdx[x.Symbol]; ok {
		x.Position = d.position[s]
	}
	d.queue.push(x)
	d.writeExecution(&x, event)
	b := append(d.hashBuf[:0], "exec "...)
	b = strconv.AppendInt(b, x.OrderID, 10)
	b = append(b, ' ')
	b = append(b, string(x.Status)...)
	b = append(b, ' ')
	b = append(b, string(x.Side)...)
	b = append(b, ' ')
	b = strconv.AppendQuote(b, x.Symbol)
	b = append(b, " qty="...)
	b = strconv.AppendFloat(b, x.Qty, 'g', -1, 64)
	b = append(b, " price="...)
	b = strconv.AppendFloat(b, x.Price, 'g', -1, 64)
	b = append(b, " fee="...)
	b = strconv.AppendFloat(b, x.Fee, 'g', -1, 64)
	b = append(b, " event="...)
	b = strconv.AppendInt(b, int64(x.Event), 10)
	b = append(b, " time="...)
	b = strconv.AppendInt(b, x.Time, 10)
	b = append(b, " reason="...)
	b = strconv.AppendQuote(b, x.Reason)
	b = append(b, '\n')
	d.hash.Write(b)
	d.hashBuf = b
}

// intake takes in the commands a hook issued during event.
func (d *Driver) intake(cmds []contract.Command, event int) {
	for _, c := range cmds {
		d.recordCommand(c, event)
		switch c.Op {
		case contract.OpBuy, contract.OpSell:
			if d.firstOrder < 0 {
				d.firstOrder = event
			}
			d.place(c, event)
		case contract.OpCancel:
			d.cancel(c, event)
		default:
			d.rejections++
			d.emit(d.submitExecution(c, event, "unknown command "+strconv.Quote(string(c.Op))), event)
		}
	}
}

func (d *Driver) recordCommand(c contract.Command, event int) {
	d.writeCommand(c, event)
	b := append(d.hashBuf[:0], "cmd "...)
	b = append(b, string(c.Op)...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, c.OrderID, 10)
	if c.Op != contract.OpCancel {
		b = append(b, ' ')
		b = strconv.AppendQuote(b, c.Symbol)
		b = append(b, " qty="...)
		b = strconv.AppendFloat(b, c.Qty, 'g', -1, 64)
		b = append(b, " limit="...)
		if c.Limit != nil {
			b = strconv.AppendFloat(b, *c.Limit, 'g', -1, 64)
		} else {
			b = append(b, "market"...)
		}
	}
	b = append(b, " hook="...)
	b = append(b, string(c.Hook)...)
	b = append(b, " event="...)
	b = strconv.AppendInt(b, int64(event), 10)
	b = append(b, '\n')
	d.hash.Write(b)
	d.hashBuf = b
}

// submitExecution is a rejection or cancel of command c, created when c is
// taken in during event.
func (d *Driver) submitExecution(c contract.Command, event int, reason string) contract.Execution {
	if reason == d.lastReason {
		reason = d.lastReason // a flood of rejections keeps one copy
	}
	d.lastReason = reason
	x := contract.Execution{
		OrderID: c.OrderID, Symbol: d.intern(c.Symbol), Qty: c.Qty,
		Status: contract.ExecRejected, Reason: reason, Time: d.bars.Time[event], Event: event,
	}
	if sd, ok := contract.SideOf(c.Op); ok {
		x.Side = sd
	}
	return x
}

// place validates an order and opens it; a bad order is rejected at once.
func (d *Driver) place(c contract.Command, event int) {
	s, known := d.symIdx[c.Symbol]
	reason := ""
	switch {
	case !known:
		reason = "unknown symbol " + strconv.Quote(c.Symbol)
	case math.IsNaN(c.Qty) || math.IsInf(c.Qty, 0) || c.Qty <= 0:
		reason = "invalid qty " + fmtFloat(c.Qty) + ": must be a finite number > 0"
	case c.Limit != nil && (math.IsNaN(*c.Limit) || math.IsInf(*c.Limit, 0) || *c.Limit <= 0):
		reason = "invalid limit price " + fmtFloat(*c.Limit) + ": must be a finite number > 0"
	case d.openCount >= maxOpenOrders:
		reason = "too many open orders: " + strconv.Itoa(d.openCount) + " are open, stratbench's limit"
	}
	if taken := d.idTaken(c.OrderID); taken != "" {
		d.rejections++
		d.emit(d.submitExecution(c, event, taken), event)
		return
	}
	d.lastID, d.placedAny = c.OrderID, true
	if reason != "" {
		// Remembered, so that cancelling it says it was rejected.
		d.closed.add(closedOrder{id: c.OrderID, name: d.intern(c.Symbol), buy: c.Op == contract.OpBuy, qty: c.Qty,
			status: code(statusNames[:], contract.ExecRejected), foreign: !known})
		d.rejections++
		d.emit(d.submitExecution(c, event, reason), event)
		return
	}
	o := order{id: c.OrderID, symbol: s, name: d.data.symbols[s], buy: c.Op == contract.OpBuy, qty: c.Qty, placedTime: d.bars.Time[event]}
	if c.Limit != nil {
		o.limit = *c.Limit
	}
	var slot int32
	if k := len(d.free); k > 0 {
		slot, d.free = d.free[k-1], d.free[:k-1]
		d.orders[slot] = o
	} else {
		slot = int32(len(d.orders))
		d.orders = append(d.orders, o)
	}
	d.byID[o.id] = slot
	d.open[s] = append(d.open[s], slot)
	d.openCount++
	d.trig[s].widen(&d.orders[slot]) // a new order only widens the summary
}

// maxOpenOrders bounds the open orders, which the driver keeps in memory
// (about 100 bytes each): a broker's limit is some thousands, and a
// strategy that leaves an order open on every bar reaches it only after
// 262,144 bars.
const maxOpenOrders = 1 << 18

// idTaken returns why an order may not have id, or "". Order ids must be
// new; the bridge numbers orders from 1 up, so an id must also be above
// every id placed before, which tells a new id from one that closed long
// ago without remembering every closed order.
func (d *Driver) idTaken(id int64) string {
	if _, open := d.byID[id]; open || d.closed.has(id) {
		return "duplicate order id " + strconv.FormatInt(id, 10)
	}
	if d.placedAny && id <= d.lastID {
		return "order id " + strconv.FormatInt(id, 10) + " is not new: order ids must increase (the last was " +
			strconv.FormatInt(d.lastID, 10) + ")"
	}
	return ""
}

// closeOrder takes the order in slot out of memory, remembering it among
// the latest closed orders; the caller has taken it off its symbol's open
// list.
func (d *Driver) closeOrder(slot int32, status contract.ExecStatus) {
	o := &d.orders[slot]
	delete(d.byID, o.id)
	d.closed.add(closedOrder{id: o.id, name: o.name, buy: o.buy, qty: o.qty, status: code(statusNames[:], status)})
	*o = order{}
	d.free = append(d.free, slot)
}

// cancel cancels an open order; cancelling anything else is rejected.
func (d *Driver) cancel(c contract.Command, event int) {
	slot, ok := d.byID[c.OrderID]
	if !ok {
		d.rejections++
		x := d.submitExecution(c, event, "cancel: no order "+strconv.FormatInt(c.OrderID, 10))
		if co, ok := d.closed.get(c.OrderID); ok {
			x.Symbol, x.Side, x.Qty = co.name, side(co.buy), co.qty
			x.Reason = "cancel: order " + strconv.FormatInt(c.OrderID, 10) + " already " + string(statusNames[co.status])
		} else if d.placedAny && c.OrderID <= d.lastID {
			// Placed and closed long ago, or never placed: which, only
			// the latest closed orders can tell.
			x.Reason = "cancel: no open order " + strconv.FormatInt(c.OrderID, 10) +
				" (nor among the latest " + strconv.Itoa(closedKept) + " closed orders, which are remembered)"
		}
		d.emit(x, event)
		return
	}
	o := &d.orders[slot]
	x := contract.Execution{
		OrderID: o.id, Symbol: o.name, Side: side(o.buy), Qty: o.qty,
		Status: contract.ExecCanceled, Time: d.bars.Time[event], Event: event,
	}
	open := d.open[o.symbol]
	for k, oi := range open {
		if oi == slot {
			d.open[o.symbol] = append(open[:k], open[k+1:]...)
			break
		}
	}
	d.openCount--
	d.retrigger(o.symbol)
	d.cancels++
	d.closeOrder(slot, contract.ExecCanceled)
	d.emit(x, event)
}

// qtyEpsilon is the relative tolerance of quantity arithmetic: fractional
// quantities do not add up exactly in binary floating point (0.1 + 0.2 is
// not 0.3), and a position that differs from zero, or a sell that exceeds
// the position, by less than this much is taken as exact.
const qtyEpsilon = 1e-9

// snapZero returns 0 for a position that is zero but for rounding, given the
// quantity that moved it.
func snapZero(pos, qty float64) float64 {
	if math.Abs(pos) <= qtyEpsilon*qty {
		return 0
	}
	return pos
}

// retrigger recomputes the trigger summary of symbol s.
func (d *Driver) retrigger(s int32) {
	t := noTrigger
	for _, slot := range d.open[s] {
		t.widen(&d.orders[slot])
	}
	d.trig[s] = t
}

// widen makes the summary cover o.
func (t *trigger) widen(o *order) {
	switch {
	case o.limit == 0:
		t.market = true
	case o.buy:
		t.buyLimit = max(t.buyLimit, o.limit)
	default:
		t.sellLimit = min(t.sellLimit, o.limit)
	}
}

// updateHeld keeps the held list in step with symbol s's position.
func (d *Driver) updateHeld(s int32) {
	k := 0
	for k < len(d.held) && d.held[k] < s {
		k++
	}
	in := k < len(d.held) && d.held[k] == s
	switch {
	case d.position[s] != 0 && !in:
		d.held = append(d.held, 0)
		copy(d.held[k+1:], d.held[k:])
		d.held[k] = s
	case d.position[s] == 0 && in:
		d.held = append(d.held[:k], d.held[k+1:]...)
	}
}

// mark takes the equity after each of the events [from, to), cash plus
// every position at its symbol's latest close, into the metrics, the
// display curve and equity.csv.
func (d *Driver) mark(from, to int) {
	sym, cls, times := d.bars.Symbol, d.bars.Close, d.bars.Time
	f := &d.equityOut
	if f.on && (d.cashText == nil || d.cash != d.cashTextOf) {
		// The cash changes only with fills, which happen before their
		// event's mark (at the first bar of a batch): one text per batch.
		d.cashText, d.cashTextOf = appendFloat(d.cashText[:0], d.cash), d.cash
	}
	eq := d.lastEquity
	for i := from; i < to; i++ {
		d.lastClose[sym[i]] = cls[i]
		eq = d.cash
		for _, h := range d.held {
			eq += float64(d.position[h] * d.lastClose[h])
		}
		d.display.add(eq)
		if endsTimestamp(times, i) {
			d.curve.add(times[i], eq)
			if len(d.held) > 0 {
				d.exposed++
			}
		}
		if f.on {
			b := strconv.AppendInt(f.buf, int64(i), 10)
			b = append(b, ',')
			b = f.t.append(b, times[i])
			b = append(b, ',')
			b = appendFloat(b, eq)
			b = append(b, ',')
			f.buf = append(b, d.cashText...)
			f.endLine()
		}
	}
	d.lastEquity = eq
	d.marked = to
}

// openRecords starts the record files in rec.
func (d *Driver) openRecords(rec contract.Records) {
	d.equityOut.open(rec, equityFile, equityHeader)
	d.tradesOut.open(rec, tradesFile, tradesHeader)
	d.ordersOut.open(rec, ordersFile, ordersHeader)
}

// flushRecords hands what the record files buffer to the contract.
func (d *Driver) flushRecords() {
	d.equityOut.flush()
	d.tradesOut.flush()
	d.ordersOut.flush()
}

// intern returns the symbol table's copy of a known symbol, and one copy of
// a run of the same unknown one, so that the executions waiting for delivery
// and the closed orders do not keep the worker's copies alive.
func (d *Driver) intern(symbol string) string {
	if s, ok := d.symIdx[symbol]; ok {
		return d.data.symbols[s]
	}
	if symbol == d.lastForeign {
		return d.lastForeign // a flood of orders for it keeps one copy
	}
	d.lastForeign = symbol
	return symbol
}

// ordersHash returns the hash of every command and execution so far.
func (d *Driver) ordersHash() string {
	return hex.EncodeToString(d.hash.Sum(nil))
}
