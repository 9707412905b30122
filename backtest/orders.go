package backtest

import (
	"encoding/hex"
	"math"
	"strconv"

	"stratbench/contract"
)

// The orders and the portfolio: what the strategy's commands do to the
// market, and the executions they produce.

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
	d.tallyFill(s, o.buy, notional, fee)
	d.updateHeld(s)
	d.book(o, i, price, fee)
	d.emit(contract.Execution{
		OrderID: o.id, Symbol: d.symbols[s], Side: side(o.buy), Qty: o.qty, Price: price, Fee: fee,
		Status: contract.ExecFilled, Time: d.timeAt(i), Event: i,
	}, i)
	d.closeOrder(slot, contract.ExecFilled)
}

func (d *Driver) reject(o *order, i int, reason string) {
	d.rejections++
	d.emit(contract.Execution{
		OrderID: o.id, Symbol: d.symbols[o.symbol], Side: side(o.buy), Qty: o.qty,
		Status: contract.ExecRejected, Reason: reason, Time: d.timeAt(i), Event: i,
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
		Status: contract.ExecRejected, Reason: reason, Time: d.timeAt(event), Event: event,
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
	o := order{id: c.OrderID, symbol: s, name: d.symbols[s], buy: c.Op == contract.OpBuy, qty: c.Qty, placedTime: d.timeAt(event)}
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
	if !d.placedAny || id > d.lastID {
		// Every id open or remembered was placed, so is at most lastID:
		// the usual case takes no map lookup.
		return ""
	}
	if _, open := d.byID[id]; open || d.closed.has(id) {
		return "duplicate order id " + strconv.FormatInt(id, 10)
	}
	return "order id " + strconv.FormatInt(id, 10) + " is not new: order ids must increase (the last was " +
		strconv.FormatInt(d.lastID, 10) + ")"
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
		Status: contract.ExecCanceled, Time: d.timeAt(event), Event: event,
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

// intern returns the symbol table's copy of a known symbol, and one copy of
// a run of the same unknown one, so that the executions waiting for delivery
// and the closed orders do not keep the worker's copies alive.
func (d *Driver) intern(symbol string) string {
	if s, ok := d.symIdx[symbol]; ok {
		return d.symbols[s]
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
