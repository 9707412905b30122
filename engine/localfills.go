package engine

import (
	"fmt"
	"math"
	"time"

	"stratbench/contract"
	"stratbench/python"
)

// Fills the worker delivers itself (docs/ARCHITECTURE.md, "The protocol").
//
// When the driver's market is stratbench's (contract.Setup.LocalFills) and
// the strategy's bar hook is on_data, the bridge may deliver the fill of a
// simple market order itself, from the symbol's next bar in the batch it
// holds, instead of yielding for it: a round trip less per order (with
// several symbols, two: the batch of the other symbols' bars before the
// fill's would have been one more). The host makes nothing of the worker's
// say: the driver makes every fill from the orders, as it would have, and
// the worker's answer is played out to it as the yields the host would
// have had without local fills, one driver batch at a time (play), each
// fill the driver makes checked against the one the worker delivered. A
// worker that delivered a fill the market did not make, or went on past an
// order the market filled before where the worker stopped, breaks the
// protocol.

// localOrder is an order the worker went on past: it delivered its fill
// itself (claim), or stopped before the bar of its fill (ranPast), or died
// (neither: salvageOrders, which cannot tell).
type localOrder struct {
	call    uint64           // the call that placed it (its only command)
	cmd     contract.Command // the order
	claim   *python.LocalFill
	ranPast bool // the worker said it did not deliver the fill
	// event and at are the event and time of call, once a yield ended at
	// it (the ledger forgets the batch): the failure of a fill never
	// checked names them (unplayed).
	event int
	at    int64
}

// play is the answer to a batch request that went further than one yield
// of the host's would have: past orders whose fills the worker delivered.
// The worker's calls after the request's first are, in order, those of
// the driver batches play serves: each starts with the fill of the order
// the previous ended with (an on_execution call, when the strategy has
// the hook), then bars, up to the next local order, the batch's end or
// through.
type play struct {
	first     uint64   // the request's first call: durations[0]'s
	durations []uint64 // of calls first.., as far as the worker said
	orders    []localOrder
	// fill is the order the previous yield ended with: the next batch
	// starts with its fill, at event.
	fill  *localOrder
	event int // the event of the next bar the worker ran

	through uint64             // the last call the worker completed, then yielded
	tail    []contract.Command // the commands of call through
	stopped bool
	// ranAll says that the worker ran every bar of the request's batch:
	// commands of its last call did not end the batch early.
	ranAll bool
	ahead  int // the length of the batch sent ahead (sendAhead), for the last yield
	// failure, when set, ends the play instead of a yield: the worker
	// failed at call through+1.
	failure error
}

// startPlay makes a play of the answer to the request for b (which
// resumed held bars when resumed): the calls from the request's first to
// through, the orders whose fills the worker delivered, then tail and
// stopped, or failure. It returns the first yield, of b itself.
func (w *worker) startPlay(b *contract.Batch, orders []localOrder, durations []uint64, through uint64, tail []contract.Command,
	stopped bool, failure error, resumed bool, execCalls int) (contract.Yield, error) {
	// What the worker holds once the play is over: the bars of b it did
	// not run (as a yield of all the bars it ran would say). Each fill it
	// delivered added an on_execution call (a salvaged order is taken as
	// delivered: salvageOrders).
	localCalls := 0
	if w.hooks[contract.HookOnExecution] {
		for i := range orders {
			if !orders[i].ranPast {
				localCalls++
			}
		}
	}
	ran := int(through+1-w.calls.first) - execCalls - localCalls
	if ran > 0 {
		w.held.served(b, ran, resumed)
	}
	w.play = &play{first: w.calls.first, durations: durations, orders: orders, event: b.FirstEvent,
		through: through, tail: tail, stopped: stopped, failure: failure, ranAll: ran == b.Bars.Len()}
	if failure == nil && !stopped && len(tail) == 0 && ran > 0 && delivered(orders) {
		// The worker says it delivered every fill: the market has nothing
		// to decide before its next bars, unless the play finds it lied,
		// which fails the run.
		w.play.ahead = w.sendAhead(b, ran, through, w.stats.bars+ran)
	}
	w.calls.startBatch(b, execCalls, execCalls+b.Bars.Len(), nil)
	return w.serve(b, execCalls, false)
}

// serve plays the next yield of w.play for the driver's batch b, which
// must start where the worker went on: at the fill of the order the
// previous yield ended with (its only execution), or at the next bar. With
// next false, b is the request's own batch, whose on_execution calls are
// execCalls and which the ledger has started.
func (w *worker) serve(b *contract.Batch, execCalls int, next bool) (contract.Yield, error) {
	p := w.play
	plain := b.FirstEvent == p.event && len(b.Executions) == 0
	switch {
	case !next:
	case p.fill != nil && plain:
		// Bars before the fill's (of the other symbols): it stays due.
	case p.fill != nil && p.fill.ranPast:
		return contract.Yield{}, w.fail(w.protocolFailure(fmt.Errorf(
			"the worker went on past order %d without its fill; the market's batch at event %d starts with %d executions",
			p.fill.cmd.OrderID, b.FirstEvent, len(b.Executions))))
	case p.fill != nil:
		if err := w.checkFill(b, p.fill, p.event); err != nil {
			return contract.Yield{}, err
		}
		if w.hooks[contract.HookOnExecution] {
			execCalls = 1
		}
		p.fill = nil
	case !plain:
		return contract.Yield{}, w.fail(w.protocolFailure(fmt.Errorf(
			"the worker went on at event %d, the market's next batch starts at %d with %d executions", p.event, b.FirstEvent, len(b.Executions))))
	}
	if next {
		w.calls.startBatch(b, execCalls, execCalls+b.Bars.Len(), nil)
	}
	first, last := w.calls.first, w.calls.last
	// This yield ends at the next local order's call, at the end of what
	// the worker ran, or at the batch's end, whichever comes first.
	end := p.through
	var order *localOrder
	if len(p.orders) > 0 && p.orders[0].call <= end {
		end, order = p.orders[0].call, &p.orders[0]
	}
	final := order == nil
	if end > last {
		end, order, final = last, nil, false
	}
	if p.fill != nil && !p.fill.ranPast && end == last && p.failure != nil {
		// A batch of the other symbols' bars before a fill the worker
		// delivered, and it failed right after the batch's last call: in
		// the fill's on_execution or its bar, calls of the next batch,
		// which starts with the fill.
		final = false
	}
	if p.failure != nil && final {
		// The worker failed within this batch, at call through+1: as a
		// failed batch, the driver marks the bars that ran before it.
		w.record(p, first, end)
		w.play = nil
		return contract.Yield{}, p.failure
	}
	if end+1 < first {
		return contract.Yield{}, w.fail(w.protocolFailure(fmt.Errorf("the worker's calls end at %d, before the batch's first, %d", end, first)))
	}
	done := int(end + 1 - first)
	w.record(p, first, end)
	y := contract.Yield{}
	if w.hooks[contract.HookOnExecution] {
		y.Executions = min(done, execCalls)
		y.Bars = done - y.Executions
	} else {
		y.Executions = len(b.Executions)
		y.Bars = done
	}
	p.event = b.FirstEvent + y.Bars
	switch {
	case order != nil:
		hook, event, at := w.calls.locate(end)
		order.event, order.at = event, at
		if hook != contract.HookOnData {
			return contract.Yield{}, w.fail(w.protocolFailure(fmt.Errorf("the worker filled order %d of call %d itself, a call of %s", order.cmd.OrderID, end, hook)))
		}
		if p.fill != nil {
			return contract.Yield{}, w.fail(w.protocolFailure(fmt.Errorf("the worker went on past order %d (call %d) while the fill of order %d was due",
				order.cmd.OrderID, end, p.fill.cmd.OrderID)))
		}
		c := order.cmd
		c.Hook = hook
		y.Commands = []contract.Command{c}
		y.Whole = true
		p.fill, p.orders = order, p.orders[1:]
	case final:
		if p.fill != nil && p.fill.claim != nil {
			return contract.Yield{}, w.fail(w.protocolFailure(fmt.Errorf("the worker filled order %d itself at %s, after the last call it made",
				p.fill.cmd.OrderID, time.Unix(0, p.fill.claim.Time).UTC().Format(time.RFC3339Nano))))
		}
		if len(p.tail) > 0 {
			hook, _, _ := w.calls.locate(end)
			for i := range p.tail {
				p.tail[i].Hook = hook
			}
			y.Commands = p.tail
		}
		y.Stopped = p.stopped
		// Unless it ends at a command before the end of the bars it held
		// or at a stop, the worker's answer ended at the end of those bars
		// or at its time budget: not at an order of its own, whatever the
		// last fill it delivered left of the batch (Yield.Whole). A
		// command of the last bar it held does not make it less whole: an
		// order on that bar, which it cannot fill from a next bar, had
		// cut the next batches to 64 bars, one round trip each, for a
		// strategy that orders on every bar.
		y.Whole = (len(p.tail) == 0 || p.ranAll) && !p.stopped
		y.Ahead = p.ahead
		w.play = nil
	}
	w.calls.completed(end)
	w.stats.yielded(y.Bars, time.Now())
	return y, nil
}

// unplayed is the failure of a run whose driver ended the replay while
// w.play was still being played out: the market has no event left for
// the calls the worker says it made after the last yield, so what the
// worker told its strategy after it was never checked. An honest worker
// delivers a fill only from a next bar its batch holds, which the market
// then fills the order at; so this is a fill the market did not make (the
// worker delivered it after the data's last bar), or calls past the
// market's last event. The order's call is blamed.
func (w *worker) unplayed() error {
	p := w.play
	w.play = nil
	if p.failure != nil {
		return p.failure
	}
	o := p.fill
	for i := 0; (o == nil || o.claim == nil) && i < len(p.orders); i++ {
		if p.orders[i].claim != nil {
			o = &p.orders[i]
		}
	}
	if o == nil || o.claim == nil {
		return w.fail(w.protocolFailure(fmt.Errorf("the worker went on to call %d, past the market's last event", p.through)))
	}
	hook, event, at := w.calls.locate(o.call)
	if o == p.fill {
		hook, event, at = contract.HookOnData, o.event, o.at
	}
	return w.fail(newFailure(contract.KindProtocol, hook, event, at, fmt.Sprintf("the worker filled order %d itself at %s, after the market's last event",
		o.cmd.OrderID, time.Unix(0, o.claim.Time).UTC().Format(time.RFC3339Nano))))
}

// delivered reports whether the worker says it delivered the fill of
// every one of orders itself.
func delivered(orders []localOrder) bool {
	for i := range orders {
		if orders[i].claim == nil || orders[i].ranPast {
			return false
		}
	}
	return true
}

// record takes the durations of calls first..end of the batch in flight
// into the statistics; a call whose duration the worker did not say (it
// was killed before its yield) counts untimed.
func (w *worker) record(p *play, first, end uint64) {
	for call := first; call <= end; call++ {
		hook, event, at := w.calls.locate(call)
		if i := call - p.first; i < uint64(len(p.durations)) {
			w.stats.add(hook, p.durations[i], event, at)
		} else {
			w.stats.untimed(hook)
		}
	}
	if end >= first {
		w.calls.recorded = max(w.calls.recorded, end)
	}
}

// checkFill checks that the driver's batch b starts with the fill of the
// order o at event, and nothing else, as the worker delivered it.
func (w *worker) checkFill(b *contract.Batch, o *localOrder, event int) error {
	if len(b.Executions) != 1 || b.FirstEvent != event {
		return w.fail(w.protocolFailure(fmt.Errorf("the worker filled order %d itself at event %d; the market's batch starts at %d with %d executions",
			o.cmd.OrderID, event, b.FirstEvent, len(b.Executions))))
	}
	x := &b.Executions[0]
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	if c := o.claim; c != nil && (x.OrderID != c.OrderID || x.Status != contract.ExecFilled || x.Event != event || x.Time != c.Time ||
		!same(x.Price, c.Price) || !same(x.Fee, c.Fee) || !same(x.Cash, c.Cash) || !same(x.Position, c.Position)) {
		return w.fail(w.protocolFailure(fmt.Errorf("the worker filled order %d itself at price %v, fee %v, cash %v, position %v; the market made it %s at price %v, fee %v, cash %v, position %v",
			c.OrderID, c.Price, c.Fee, c.Cash, c.Position, x.Status, x.Price, x.Fee, x.Cash, x.Position)))
	}
	if o.claim == nil && x.OrderID != o.cmd.OrderID {
		return w.fail(w.protocolFailure(fmt.Errorf("the worker filled order %d itself; the market's batch starts with order %d", o.cmd.OrderID, x.OrderID)))
	}
	return nil
}

// localOrders takes the commands of the request's calls before through as
// the orders the worker went on past, pairing its local fills with them
// in order, and checks that each is one the bridge may go on past: a
// market order that was its call's only command, of a call of the request
// before through, in call order. An order without a fill is one whose
// fill the worker did not deliver (it stopped before the bar of its fill).
// The rest of pending are the commands of call through.
func (w *worker) localOrders(msg *python.YieldMsg, first uint64) ([]localOrder, []contract.Command, error) {
	cmds := w.pending.list
	n := 0 // the commands of calls before through
	for n < len(cmds) && cmds[n].call < msg.Through {
		n++
	}
	if len(msg.Local) == 0 && n == 0 {
		return nil, nil, nil
	}
	if !w.local || w.calls.starts != nil {
		return nil, nil, fmt.Errorf("yield with %d fills the worker delivered itself and %d commands before its last call, which this run does not allow",
			len(msg.Local), n)
	}
	if n < len(msg.Local) {
		return nil, nil, fmt.Errorf("yield with %d local fills and %d commands before its last call", len(msg.Local), n)
	}
	orders := make([]localOrder, n)
	prev, k := first-1, 0
	for i, c := range cmds[:n] {
		market := c.cmd.Limit == nil && c.cmd.Op != contract.OpCancel
		var claim *python.LocalFill
		if k < len(msg.Local) && msg.Local[k].Call <= c.call {
			claim = &msg.Local[k]
			if !market || claim.Call != c.call || claim.OrderID != c.cmd.OrderID {
				return nil, nil, fmt.Errorf("local fill of order %d (call %d): the command is %s of order %d (call %d)",
					claim.OrderID, claim.Call, c.cmd.Op, c.cmd.OrderID, c.call)
			}
			k++
		}
		switch {
		case c.call <= prev:
			return nil, nil, fmt.Errorf("command of order %d from call %d, after call %d: one order per call goes on", c.cmd.OrderID, c.call, prev)
		case !market:
			return nil, nil, fmt.Errorf("%s of order %d (call %d) before the yield's last call %d: only a market order goes on", c.cmd.Op, c.cmd.OrderID, c.call, msg.Through)
		}
		prev = c.call
		orders[i] = localOrder{call: c.call, cmd: c.cmd, claim: claim, ranPast: claim == nil}
	}
	if k < len(msg.Local) {
		f := &msg.Local[k]
		return nil, nil, fmt.Errorf("local fill of order %d (call %d), which is no order of a call before %d", f.OrderID, f.Call, msg.Through)
	}
	tail := make([]contract.Command, 0, len(cmds)-n)
	for _, c := range cmds[n:] {
		if c.call != msg.Through {
			return nil, nil, fmt.Errorf("command of order %d from call %d, which neither yields nor was filled locally (through %d)", c.cmd.OrderID, c.call, msg.Through)
		}
		tail = append(tail, c.cmd)
	}
	w.pending.drop()
	return orders, tail, nil
}
