package backtest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"math"
	"strconv"

	"stratbench/contract"
	"stratbench/data"
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

// The fields of Options, for OptionError.
const (
	OptionCash        = "Cash"
	OptionFeeBps      = "FeeBps"
	OptionSlippageBps = "SlippageBps"
)

// OptionError is an option of the market out of its range: Option names
// the field of Options (OptionCash, …), Msg says what is wrong without
// naming a flag (a command names the one that gave the value). It is bad
// usage.
type OptionError struct {
	Option string
	Msg    string
}

func (e *OptionError) Error() string { return e.Option + " " + e.Msg }

func (o Options) validate() error {
	finite := func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
	switch {
	case !finite(o.Cash) || o.Cash <= 0:
		return &OptionError{OptionCash, "must be a finite number > 0, got " + fmtFloat(o.Cash)}
	case !finite(o.FeeBps) || o.FeeBps < 0:
		return &OptionError{OptionFeeBps, "must be a finite number >= 0, got " + fmtFloat(o.FeeBps)}
	case !finite(o.SlippageBps) || o.SlippageBps < 0 || o.SlippageBps >= 10_000:
		return &OptionError{OptionSlippageBps, "must be >= 0 and below 10000, got " + fmtFloat(o.SlippageBps)}
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
	set     *data.Set
	symbols []string // the set's symbol table
	n       int      // events to replay
	opts    Options
	symIdx  map[string]int32

	// The events held while Drive runs: event i is row i-base of bars.
	// The stream holds the events from the one before the replay's
	// position to the furthest the batches look ahead, no more.
	stream  *data.Stream
	bars    contract.Bars
	base    int
	dataErr error // what ended the data before its last event, once met

	// Batching: tests shrink these.
	maxBars, maxExecs, lookahead int
	// byTime: the strategy has on_bars, and the replay goes by timestamp
	// (timestamps.go).
	byTime  bool
	fillsAt []fillAt // matchTimestamp's, kept for the next

	// Portfolio.
	cash       float64
	position   []float64     // by symbol
	lastClose  []float64     // by symbol; 0 before the symbol's first bar
	firstClose []float64     // by symbol; 0 before the symbol's first bar
	held       []int32       // symbols with a non-zero position, ascending
	lots       [][]lot       // by symbol: open FIFO lots
	tally      []symbolTally // by symbol: the report's per-symbol figures

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
	markedTime  int64   // the time of event marked-1
	markedEnds  bool    // whether event marked-1 is the last of its timestamp
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

// NewDriver returns a driver that replays the bars of set with the market
// flags opts. Its errors are bad input: invalid options (*OptionError). Each driver reads
// the set through a stream of its own while Drive runs, so several drivers
// may replay one set at once (the runs of a sweep).
func NewDriver(set *data.Set, opts Options) (*Driver, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	symbols := set.Symbols()
	nsym := len(symbols)
	d := &Driver{
		set: set, symbols: symbols, n: int(set.Info().Events), opts: opts,
		symIdx:     make(map[string]int32, nsym),
		maxBars:    maxBatchBars,
		maxExecs:   maxBatchExecutions,
		lookahead:  initialLookahead,
		cash:       opts.Cash,
		position:   make([]float64, nsym),
		lastClose:  make([]float64, nsym),
		firstClose: make([]float64, nsym),
		lots:       make([][]lot, nsym),
		tally:      make([]symbolTally, nsym),
		byID:       make(map[int64]int32),
		open:       make([][]int32, nsym),
		trig:       make([]trigger, nsym),
		closed:     newClosedOrders(),
		curve:      newCurveStats(opts.Cash),
		display:    newDisplayCurve(int(set.Info().Events)),
		hash:       sha256.New(),
		firstOrder: -1,
		buyFactor:  1 + opts.SlippageBps/10_000,
		sellFactor: 1 - opts.SlippageBps/10_000,
	}
	for i, s := range symbols {
		d.symIdx[s] = int32(i)
		d.trig[i] = noTrigger
	}
	return d, nil
}

// Setup describes the replay. The data's hash is Outcome's: it is computed
// as the data streams.
func (d *Driver) Setup() contract.Setup {
	info := d.set.Info()
	di := contract.DataInfo{Source: info.Source, Events: int(info.Events), Symbols: info.Symbols, Window: d.set.Window().String()}
	if info.Events > 0 {
		di.From, di.To = formatTime(info.From.UnixNano()), formatTime(info.To.UnixNano())
	}
	return contract.Setup{
		Data:       di,
		Cash:       d.opts.Cash,
		Flags:      d.flags(),
		Market:     contract.MarketInfo{Cash: d.opts.Cash, FeeBps: d.opts.FeeBps, SlippageBps: d.opts.SlippageBps, AllowShort: d.opts.AllowShort},
		LocalFills: true,
	}
}

// flags is the canonical text of the market flags and the window.
func (d *Driver) flags() string {
	return "cash=" + fmtFloat(d.opts.Cash) +
		" fee_bps=" + fmtFloat(d.opts.FeeBps) +
		" slippage_bps=" + fmtFloat(d.opts.SlippageBps) +
		" allow_short=" + strconv.FormatBool(d.opts.AllowShort) +
		" window=" + d.set.Window().String()
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
	st, err := d.set.Stream(ctx)
	if err != nil { // the first stream of many Parquet streams spills them, and may meet a bad bar
		d.dataErr = err
		return d.dataFailure(0)
	}
	d.stream = st
	defer d.closeStream()
	d.byTime = barHook(w) == contract.HookOnBars
	d.openRecords(rec)
	defer d.flushRecords()
	n := d.n
	pos := 0         // next bar whose on_data is due
	matched := false // whether the fills at bar pos are matched
	ahead := 0       // the batch the worker was sent ahead: its length (Yield.Ahead)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		// The event before pos is the last one commands are placed at.
		st.Release(pos - 1)
		if pos < n && !d.hold(pos+1) {
			return d.dataFailure(pos)
		}
		if pos < n && !matched {
			if d.byTime {
				d.matchTimestamp(pos, d.timestampEnd(pos))
			} else {
				d.match(pos)
			}
			matched = true
		}
		if pos >= n && d.queue.len() == 0 {
			return nil
		}
		b := &d.batch
		*b = contract.Batch{FirstEvent: pos, Executions: d.queue.first(d.maxExecs)}
		switch {
		case ahead > 0:
			// The worker has its next batch already: it can only be
			// the bars it was sent.
			if err := d.checkAhead(pos, ahead); err != nil {
				return err
			}
			d.setBars(b, pos, pos+ahead)
		case len(b.Executions) == d.queue.len() && pos < n:
			// Every waiting execution goes before the bars.
			d.setBars(b, pos, d.cut(pos))
		}
		y, err := w.Run(ctx, b)
		if err != nil {
			d.markBeforeFailure(b, err)
			return err
		}
		if err := checkYield(b, y); err != nil {
			return err
		}
		d.queue.drop(y.Executions)
		event := min(pos, n-1) // where commands from on_execution were placed
		if y.Bars > 0 {
			d.hold(pos + y.Bars + 1) // whether the last one ends its timestamp
			d.mark(pos, pos+y.Bars)
			event = pos + y.Bars - 1
			pos += y.Bars
			matched = false
			if y.Bars == b.Bars.Len() || y.Whole {
				// A worker that went on past its orders (it delivered
				// their fills itself) yields at the end of what it holds:
				// batches as long as when it trades nothing.
				d.lookahead = min(2*d.lookahead, d.maxBars)
			} else {
				d.lookahead = max(2*y.Bars, minLookahead)
			}
		}
		d.intake(y.Commands, event)
		ahead = y.Ahead
		if y.Stopped {
			return contract.ErrStopped
		}
		if d.queue.bytes > maxPendingBytes {
			return d.stalled(event)
		}
	}
}

// setBars gives b the events [pos, end), which are held, and, when the
// market has nothing to decide before the events after them (no order
// open, no execution waiting but b's), those of the next batch as Ahead:
// as many as after a batch run whole, as far as they can be held.
func (d *Driver) setBars(b *contract.Batch, pos, end int) {
	next := end
	if d.openCount == 0 && d.queue.len() == len(b.Executions) && !d.byTime && end < d.n {
		// Held before either is sliced: holding more may move the
		// events held (data.Stream.Fill).
		want := min(d.n, end+min(2*d.lookahead, d.maxBars))
		d.hold(want)
		next = min(want, d.heldEnd())
	}
	b.Bars = d.bars.Slice(pos-d.base, end-d.base)
	if next > end {
		b.Ahead = d.bars.Slice(end-d.base, next-d.base)
	}
}

// checkAhead checks that the worker may have been sent the events [pos,
// pos+n) as its next batch (contract.Yield.Ahead): no order is open, no
// execution waits, and they are held. The worker sends a batch ahead only
// when its answer leaves the market nothing to decide; a driver that
// disagrees has a bug, and the replay stops rather than go on with a
// worker that holds other bars than the market's.
func (d *Driver) checkAhead(pos, n int) error {
	if d.openCount > 0 || d.queue.len() > 0 || d.byTime || pos+n > d.heldEnd() || pos+n > d.n {
		return fmt.Errorf("backtest: the worker was sent events %d to %d ahead, but %d orders are open, %d executions wait and %d events are held",
			pos, pos+n, d.openCount, d.queue.len(), d.heldEnd())
	}
	return nil
}

// markBeforeFailure marks the bars of the failed batch that ran before the
// event the failure names: their on_data returned, and issued no command
// (the worker yields at the first call that does), so the metrics of a
// failed run cover every event that ran. The event is the worker's claim;
// it is only believed inside the batch, and it only shapes the failed
// run's own metrics.
func (d *Driver) markBeforeFailure(b *contract.Batch, err error) {
	var f *contract.Failure
	if !errors.As(err, &f) || f.EventIndex == nil || f.Hook != contract.HookOnData && f.Hook != contract.HookOnBars {
		return
	}
	if at := *f.EventIndex; at > b.FirstEvent && at <= b.FirstEvent+b.Bars.Len() {
		d.mark(b.FirstEvent, at)
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
	end := min(d.n, pos+min(d.lookahead, d.maxBars))
	d.hold(end)
	end = min(end, d.heldEnd())
	first := pos + 1 // the first bar at which a fill ends the batch
	if d.byTime {
		// The fills of pos's timestamp are matched; a later timestamp's
		// fills end the batch at its start.
		end = d.alignCut(pos, end)
		first = d.timestampEnd(pos)
	}
	if d.openCount == 0 {
		return end
	}
	sym, low, high := d.bars.Symbol, d.bars.Low, d.bars.High
	for j := first; j < end; j++ {
		k := j - d.base
		tr := &d.trig[sym[k]]
		if !tr.market && low[k] > tr.buyLimit && high[k] < tr.sellLimit {
			continue
		}
		for _, slot := range d.open[sym[k]] {
			if _, ok := d.fillPrice(&d.orders[slot], j); ok {
				if d.byTime {
					return d.timestampStart(j, pos)
				}
				return j
			}
		}
	}
	return end
}

// fillPrice returns the price at which o fills on bar i, if it does.
func (d *Driver) fillPrice(o *order, i int) (float64, bool) {
	k := i - d.base
	if o.placedTime >= d.bars.Time[k] {
		return 0, false
	}
	open := d.bars.Open[k]
	switch {
	case o.limit == 0 && o.buy:
		return float64(open * d.buyFactor), true
	case o.limit == 0:
		return float64(open * d.sellFactor), true
	case o.buy && d.bars.Low[k] <= o.limit:
		return min(open, o.limit), true
	case !o.buy && d.bars.High[k] >= o.limit:
		return max(open, o.limit), true
	}
	return 0, false
}

// match fills (or rejects) the open orders that bar i fills, in submission order.
func (d *Driver) match(i int) {
	k := i - d.base
	s := d.bars.Symbol[k]
	if len(d.open[s]) == 0 {
		return
	}
	// Resting limits the bar does not reach: nothing to look at (a
	// strategy may keep thousands of them open).
	if tr := &d.trig[s]; !tr.market && d.bars.Low[k] > tr.buyLimit && d.bars.High[k] < tr.sellLimit {
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

// mark takes the equity after each of the events [from, to), cash plus
// every position at its symbol's latest close, into the metrics, the
// display curve and equity.csv (with each event's symbol and close).
func (d *Driver) mark(from, to int) {
	sym, cls, times := d.bars.Symbol, d.bars.Close, d.bars.Time
	f := &d.equityOut
	if f.on && (d.cashText == nil || d.cash != d.cashTextOf) {
		// The cash changes only with fills, which happen before their
		// event's mark (at the first bar of a batch): one text per batch.
		d.cashText, d.cashTextOf = appendFloat(d.cashText[:0], d.cash), d.cash
	}
	eq := d.lastEquity
	ends := false
	for i := from; i < to; i++ {
		k := i - d.base
		s := sym[k]
		if d.firstClose[s] == 0 {
			d.firstClose[s] = cls[k]
		}
		d.lastClose[s] = cls[k]
		eq = d.cash
		for _, h := range d.held {
			eq += float64(d.position[h] * d.lastClose[h])
		}
		d.display.add(eq)
		// Ends its timestamp: the last event, or the last held (the data
		// ended early, and the replay with it).
		ends = k+1 == len(times) || times[k+1] != times[k]
		if ends {
			d.curve.add(times[k], eq)
			if len(d.held) > 0 {
				d.exposed++
				for _, h := range d.held {
					d.tally[h].exposed++
				}
			}
		}
		if f.on {
			b := strconv.AppendInt(f.buf, int64(i), 10)
			b = append(b, ',')
			b = f.t.append(b, times[k])
			b = append(b, ',')
			b = appendFloat(b, eq)
			b = append(b, ',')
			b = append(b, d.cashText...)
			// The event's bar: its symbol and close (the reports draw
			// prices and buy-and-hold from them).
			b = append(b, ',')
			b = appendCSV(b, d.symbols[s])
			b = append(b, ',')
			f.buf = appendFloat(b, cls[k])
			f.endLine()
		}
	}
	d.lastEquity = eq
	d.marked = to
	d.markedTime, d.markedEnds = times[to-1-d.base], ends
}

// heldEnd returns the end of the events held (exclusive).
func (d *Driver) heldEnd() int { return d.base + d.bars.Len() }

// hold makes the events up to end (exclusive, at most the last) available
// and reports whether they are. They are not when the data ended early:
// a bad bar met as it streams, a file that changed, ctx done; dataErr
// says why.
func (d *Driver) hold(end int) bool {
	end = min(end, d.n)
	if end > d.heldEnd() && d.dataErr == nil {
		b, first, err := d.stream.Fill(end)
		d.bars, d.base, d.dataErr = contract.Bars(b), first, err
	}
	return end <= d.heldEnd()
}

// dataFailure is why the replay cannot go on at event pos: the data ended
// there. A bad bar met as the data streams is a failure of kind data,
// naming the file, row or line and column; a context that ended stops
// the replay.
func (d *Driver) dataFailure(pos int) error {
	var de *data.Error
	if !errors.As(d.dataErr, &de) {
		if d.dataErr == nil { // cannot happen: a stream ends early only with an error
			d.dataErr = errors.New("the data ended early")
		}
		return d.dataErr
	}
	f := &contract.Failure{Kind: contract.KindData, Hook: contract.HookOnData, Message: de.Error(), EventIndex: &pos}
	return f
}

// closeStream ends the replay's stream. The events still held stay
// readable: they are no longer the stream's.
func (d *Driver) closeStream() {
	d.stream.Close()
	d.stream = nil
}

// timeAt returns the time of event i, which must be held.
func (d *Driver) timeAt(i int) int64 { return d.bars.Time[i-d.base] }

// openRecords starts the record files in rec.
func (d *Driver) openRecords(rec contract.Records) {
	d.equityOut.open(rec, equityFile, equityHeader, d.n*equityLineBytes)
	d.tradesOut.open(rec, tradesFile, tradesHeader, 0)
	d.ordersOut.open(rec, ordersFile, ordersHeader, 0)
}

// flushRecords hands what the record files buffer to the contract.
func (d *Driver) flushRecords() {
	d.equityOut.flush()
	d.tradesOut.flush()
	d.ordersOut.flush()
}
