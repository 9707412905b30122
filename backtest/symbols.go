package backtest

import (
	"math"

	"stratbench/contract"
)

// symbolTally is what the replay keeps of one symbol for the report's
// per-symbol figures, as it goes: constant memory per symbol.
type symbolTally struct {
	fills    int
	trades   int
	cashFlow float64 // sells less buys less fees
	realized float64 // net P&L of the closed trades
	fees     float64
	exposed  int // timestamps that ended with a position in the symbol
}

// tallyFill counts a fill of symbol s: a buy (or sell) of notional at fee.
func (d *Driver) tallyFill(s int32, buy bool, notional, fee float64) {
	t := &d.tally[s]
	t.fills++
	t.fees += fee
	if buy {
		t.cashFlow -= notional + fee
	} else {
		t.cashFlow += notional - fee
	}
}

// symbolFigures returns the figures of each symbol the replay filled an
// order of, after metrics (which completes the curve, whose points are
// exposure's denominator).
func (d *Driver) symbolFigures() map[string]contract.SymbolFigures {
	out := map[string]contract.SymbolFigures{}
	for s, t := range d.tally {
		if t.fills == 0 {
			continue
		}
		f := contract.SymbolFigures{
			Fills:       t.fills,
			Trades:      t.trades,
			PnL:         t.cashFlow + float64(d.position[s]*d.lastClose[s]),
			RealizedPnL: t.realized,
			Fees:        t.fees,
			Position:    d.position[s],
		}
		if d.curve.points > 0 {
			f.Exposure = float64(t.exposed) / float64(d.curve.points)
		}
		for _, v := range []*float64{&f.PnL, &f.RealizedPnL, &f.Fees, &f.Exposure} {
			if math.IsNaN(*v) || math.IsInf(*v, 0) {
				*v = 0
			}
		}
		out[d.symbols[s]] = f
	}
	return out
}
