package backtest

// lot is an open part of a position: what one fill opened and no later fill
// has closed yet.
type lot struct {
	qty   float64 // remaining, > 0
	long  bool
	price float64
	fee   float64 // the part of the opening fee not yet assigned to a trade
	event int
	time  int64
}

// trade is a closed round trip: a lot, or part of one, and the fill that
// closed it.
type trade struct {
	symbol     int32
	long       bool
	qty        float64
	entryPrice float64
	entryEvent int
	entryTime  int64
	exitPrice  float64
	exitEvent  int
	exitTime   int64
	fees       float64 // the shares of the opening and closing fees
	grossPnL   float64
	netPnL     float64
}

// book matches a fill of o at price on bar i against the symbol's open lots,
// first in first out: it closes opposite lots (recording a trade for each)
// and opens a lot with whatever quantity is left.
func (d *Driver) book(o *order, i int, price, fee float64) {
	s := o.symbol
	lots := d.lots[s]
	left := o.qty
	for left > 0 && len(lots) > 0 && lots[0].long != o.buy {
		l := &lots[0]
		take := min(left, l.qty)
		entryFee := float64(l.fee * (take / l.qty))
		exitFee := float64(fee * (take / o.qty))
		gross := float64((price - l.price) * take)
		if !l.long {
			gross = -gross
		}
		d.closeTrade(&trade{
			symbol: s, long: l.long, qty: take,
			entryPrice: l.price, entryEvent: l.event, entryTime: l.time,
			exitPrice: price, exitEvent: i, exitTime: d.timeAt(i),
			fees: entryFee + exitFee, grossPnL: gross, netPnL: gross - entryFee - exitFee,
		})
		left -= take
		if take == l.qty || l.qty-take <= qtyEpsilon*o.qty {
			lots = lots[1:]
		} else {
			l.qty -= take
			l.fee -= entryFee
		}
		if left <= qtyEpsilon*o.qty {
			left = 0
		}
	}
	if left > 0 {
		lots = append(lots, lot{
			qty: left, long: o.buy, price: price, fee: float64(fee * (left / o.qty)),
			event: i, time: d.timeAt(i),
		})
	}
	d.lots[s] = lots
}

// closeTrade counts a closed trade in the metrics and writes it to
// trades.csv; it is not kept.
func (d *Driver) closeTrade(t *trade) {
	d.tradeStats.add(t.netPnL)
	d.tally[t.symbol].trades++
	d.tally[t.symbol].realized += t.netPnL
	d.writeTrade(t)
}
