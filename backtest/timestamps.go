package backtest

import (
	"slices"

	"stratbench/contract"
)

// A strategy with on_bars is called once per timestamp, with every bar of
// it: the driver replays it by timestamp. A batch never ends inside a
// timestamp (the worker makes one call of each group of bars with one
// time), and the fills of a timestamp are matched together before its
// call, in the order the orders were placed, whatever their symbols: a
// rebalance that sells one symbol and buys another frees the cash first
// when it places the sell first (docs/strategy.md, "Several symbols").

// timestampEnd returns the end of the timestamp of event i (exclusive):
// the first later event with another time, or the end of the events held.
// A timestamp has one bar per symbol at most: holding i+symbols+1 events
// holds the whole of it, and the event after it, when the data has them.
func (d *Driver) timestampEnd(i int) int {
	d.hold(i + len(d.symbols) + 1)
	end, t := d.heldEnd(), d.bars.Time[i-d.base]
	j := i + 1
	for j < end && d.bars.Time[j-d.base] == t {
		j++
	}
	return j
}

// timestampStart returns the first event of the timestamp of event i,
// which must be held, no earlier than from.
func (d *Driver) timestampStart(i, from int) int {
	t := d.bars.Time[i-d.base]
	for i > from && d.bars.Time[i-1-d.base] == t {
		i--
	}
	return i
}

// alignCut moves the end of a batch starting at pos, a timestamp's first
// event, to a timestamp's end: back to the start of the timestamp it
// would split, or, when the batch is that one timestamp's (a timestamp of
// more bars than the batch may hold), forward to its end. A batch that
// ends where the data ended early (a bad bar met as it streams) may not
// hold the whole of its last timestamp: it ends before it, unless that
// timestamp is the batch's only one (the replay then fails at the data).
func (d *Driver) alignCut(pos, end int) int {
	if end >= d.n {
		return end
	}
	if d.hold(end+1) && d.bars.Time[end-d.base] != d.bars.Time[end-1-d.base] {
		return end // already between two timestamps
	}
	if start := d.timestampStart(end-1, pos); start > pos {
		return start
	}
	return d.timestampEnd(pos)
}

// fillAt is an open order that a bar of the timestamp being matched fills.
type fillAt struct {
	slot  int32
	id    int64
	bar   int
	price float64
}

// matchTimestamp fills (or rejects) the open orders that the bars of one
// timestamp, events [from, to), fill: in the order they were placed,
// across symbols.
func (d *Driver) matchTimestamp(from, to int) {
	fills := d.fillsAt[:0]
	for i := from; i < to; i++ {
		k := i - d.base
		s := d.bars.Symbol[k]
		if len(d.open[s]) == 0 {
			continue
		}
		if tr := &d.trig[s]; !tr.market && d.bars.Low[k] > tr.buyLimit && d.bars.High[k] < tr.sellLimit {
			continue
		}
		n := len(fills)
		kept := d.open[s][:0]
		for _, slot := range d.open[s] {
			if price, ok := d.fillPrice(&d.orders[slot], i); ok {
				fills = append(fills, fillAt{slot: slot, id: d.orders[slot].id, bar: i, price: price})
			} else {
				kept = append(kept, slot)
			}
		}
		if len(fills) > n {
			d.open[s] = kept
			d.openCount -= len(fills) - n
		}
	}
	// Order ids increase with placement (the driver refuses any other).
	slices.SortFunc(fills, func(a, b fillAt) int {
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
	for _, f := range fills {
		d.execute(f.slot, f.bar, f.price)
	}
	for _, f := range fills {
		d.retrigger(d.bars.Symbol[f.bar-d.base])
	}
	d.fillsAt = fills[:0]
}

// barHook is the hook the driver replays bars to: on_bars or on_data.
func barHook(w contract.Worker) contract.Hook { return contract.BarHook(w.Manifest().Hooks) }
