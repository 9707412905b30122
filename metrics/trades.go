package metrics

import (
	"math"
	"time"
)

// Trade is a closed round trip, as trades.csv records it
// (docs/fills-and-metrics.md).
type Trade struct {
	Symbol                string
	Long                  bool
	Qty                   float64
	EntryTime, ExitTime   int64 // unix nanoseconds
	EntryPrice, ExitPrice float64
	Fees, NetPnL          float64
	Return                float64 // net P&L / (entry price × qty)
}

// Trades are the figures of closed trades.
type Trades struct {
	Count   int
	WinRate float64 // trades with P&L > 0 / trades
	// ProfitFactor is the winners' P&L over the losers' loss (NaN when no
	// trade lost); Payoff the mean winner's P&L over the mean loser's loss.
	ProfitFactor, Payoff float64
	// Expectancy is the mean P&L per trade, in cash.
	Expectancy float64
	// AvgReturn, MedianReturn, Best and Worst are over the trades'
	// returns (net P&L / entry notional).
	AvgReturn, MedianReturn, Best, Worst float64
	// AvgHolding is the mean time from entry to exit.
	AvgHolding time.Duration
	// SQN is Van Tharp's system quality number: √n × mean P&L / std P&L.
	SQN float64
}

// TradeStats computes the figures of trades; undefined ones are NaN.
func TradeStats(trades []Trade) Trades {
	nan := math.NaN()
	s := Trades{Count: len(trades), WinRate: nan, ProfitFactor: nan, Payoff: nan, Expectancy: nan,
		AvgReturn: nan, MedianReturn: nan, Best: nan, Worst: nan, SQN: nan}
	n := len(trades)
	if n == 0 {
		return s
	}
	var wins, losses int
	var won, lost, total, sumRet float64
	var held time.Duration
	rets := make([]float64, n)
	s.Best, s.Worst = trades[0].Return, trades[0].Return
	for i, t := range trades {
		total += t.NetPnL
		sumRet += t.Return
		rets[i] = t.Return
		s.Best, s.Worst = max(s.Best, t.Return), min(s.Worst, t.Return)
		held += time.Duration(t.ExitTime - t.EntryTime)
		switch {
		case t.NetPnL > 0:
			wins++
			won += t.NetPnL
		case t.NetPnL < 0:
			losses++
			lost -= t.NetPnL
		}
	}
	s.WinRate = float64(wins) / float64(n)
	s.Expectancy = total / float64(n)
	s.AvgReturn = sumRet / float64(n)
	s.MedianReturn = median(rets)
	s.AvgHolding = held / time.Duration(n)
	if losses > 0 {
		s.ProfitFactor = won / lost
		if wins > 0 {
			s.Payoff = (won / float64(wins)) / (lost / float64(losses))
		}
	}
	if n >= 2 {
		var ss float64
		for _, t := range trades {
			d := t.NetPnL - s.Expectancy
			ss += d * d
		}
		if std := math.Sqrt(ss / float64(n-1)); std > 0 {
			s.SQN = math.Sqrt(float64(n)) * s.Expectancy / std
		}
	}
	return s
}
