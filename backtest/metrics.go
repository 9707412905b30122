package backtest

import (
	"maps"
	"stratbench/engine"

	"math"
	"slices"
)

// secondsPerYear is the length of a Julian year, for annualising.
const secondsPerYear = 365.25 * 24 * 3600

// Metrics is the performance summary of a replay, the report's "metrics"
// object. doc.go defines every field. Values that would be undefined (no
// trades, no variance, no time elapsed) are 0, never NaN or infinite.
type Metrics struct {
	StartEquity          float64            `json:"start_equity"`
	FinalEquity          float64            `json:"final_equity"`
	FinalCash            float64            `json:"final_cash"`
	Positions            map[string]float64 `json:"positions"`
	TotalReturn          float64            `json:"total_return"`
	CAGR                 float64            `json:"cagr"`
	Volatility           float64            `json:"volatility"`
	Sharpe               float64            `json:"sharpe"`
	Sortino              float64            `json:"sortino"`
	Calmar               float64            `json:"calmar"`
	MaxDrawdown          float64            `json:"max_drawdown"`
	MaxDrawdownDurationS float64            `json:"max_drawdown_duration_s"`
	Fills                int                `json:"fills"`
	Rejections           int                `json:"rejections"`
	Cancels              int                `json:"cancels"`
	OpenOrders           int                `json:"open_orders"`
	Trades               int                `json:"trades"`
	WinRate              float64            `json:"win_rate"`
	ProfitFactor         float64            `json:"profit_factor"`
	Expectancy           float64            `json:"expectancy"`
	Fees                 float64            `json:"fees"`
	Exposure             float64            `json:"exposure"`
	BuyAndHoldReturn     float64            `json:"buy_and_hold_return"`
	WarmupBars           int                `json:"warmup_bars"`
	Events               int                `json:"events"`
	BarIntervalS         float64            `json:"bar_interval_s"`
	PeriodsPerYear       float64            `json:"periods_per_year"`
}

// curve is an equity curve sampled once per distinct timestamp: the equity
// after the last event of that timestamp.
type curve struct {
	time   []int64 // unix nanoseconds, increasing
	equity []float64
}

// sampleCurve takes the last event of each timestamp from per-event equity.
func sampleCurve(times []int64, equity []float64) curve {
	distinct := 0
	for i := range equity {
		if i+1 == len(equity) || times[i+1] != times[i] {
			distinct++
		}
	}
	c := curve{time: make([]int64, 0, distinct), equity: make([]float64, 0, distinct)}
	for i := range equity {
		if i+1 < len(equity) && times[i+1] == times[i] {
			continue
		}
		c.time = append(c.time, times[i])
		c.equity = append(c.equity, equity[i])
	}
	return c
}

// medianGap returns the median time between consecutive timestamps, in
// seconds. Bar data has few distinct gaps, so it counts them rather than
// sorting them all.
func medianGap(times []int64) float64 {
	counts := map[int64]int{}
	for i := 1; i < len(times); i++ {
		counts[times[i]-times[i-1]]++
	}
	gaps := slices.Sorted(maps.Keys(counts))
	// The elements at ranks lo and hi (equal for an odd count) of the sorted gaps.
	n := len(times) - 1
	lo, hi := (n-1)/2, n/2
	var atLo, atHi int64
	seen := 0
	for _, g := range gaps {
		next := seen + counts[g]
		if lo >= seen && lo < next {
			atLo = g
		}
		if hi >= seen && hi < next {
			atHi = g
			break
		}
		seen = next
	}
	return float64(atLo+atHi) / 2 / 1e9
}

// returnStats computes the return-based metrics of a curve that starts from
// start equity.
func (m *Metrics) returnStats(c curve, start float64) {
	k := len(c.time)
	if k == 0 {
		return
	}
	span := float64(c.time[k-1]-c.time[0]) / 1e9
	if k >= 2 {
		m.BarIntervalS = medianGap(c.time)
	}
	if span > 0 {
		years := span / secondsPerYear
		m.PeriodsPerYear = float64(k-1) / years
		switch final := c.equity[k-1]; {
		case final <= 0:
			m.CAGR = -1
		default:
			if g := math.Pow(final/start, 1/years) - 1; !math.IsInf(g, 0) && !math.IsNaN(g) {
				m.CAGR = g
			}
		}
	}
	// Per-period returns between consecutive timestamps.
	var sum, sumSq, downSq float64
	nret := k - 1
	rets := make([]float64, 0, nret)
	for i := 1; i < k; i++ {
		prev := c.equity[i-1]
		r := 0.0
		if prev != 0 {
			r = (c.equity[i] - prev) / math.Abs(prev)
		}
		rets = append(rets, r)
		sum += r
	}
	if nret >= 2 && m.PeriodsPerYear > 0 {
		mean := sum / float64(nret)
		for _, r := range rets {
			sumSq += (r - mean) * (r - mean)
			if r < 0 {
				downSq += r * r
			}
		}
		std := math.Sqrt(sumSq / float64(nret-1))
		annual := math.Sqrt(m.PeriodsPerYear)
		m.Volatility = std * annual
		if std > 0 {
			m.Sharpe = mean / std * annual
		}
		if down := math.Sqrt(downSq / float64(nret)); down > 0 {
			m.Sortino = mean / down * annual
		}
	}
	m.drawdown(c, start)
	if m.MaxDrawdown > 0 {
		m.Calmar = m.CAGR / m.MaxDrawdown
	}
}

// drawdown finds the largest fall from a running peak (the start equity
// counts as the first peak, at the first timestamp) and the longest time from
// a peak until the equity is back at it, or until the end when it never is.
func (m *Metrics) drawdown(c curve, start float64) {
	peak, peakTime := start, c.time[0]
	under := false
	for i, e := range c.equity {
		t := c.time[i]
		if e >= peak {
			if under {
				m.MaxDrawdownDurationS = max(m.MaxDrawdownDurationS, float64(t-peakTime)/1e9)
			}
			peak, peakTime, under = e, t, false
			continue
		}
		under = true
		if peak > 0 {
			m.MaxDrawdown = max(m.MaxDrawdown, (peak-e)/peak)
		}
	}
	if under {
		m.MaxDrawdownDurationS = max(m.MaxDrawdownDurationS, float64(c.time[len(c.time)-1]-peakTime)/1e9)
	}
}

// tradeStats computes the metrics of closed round trips.
func (m *Metrics) tradeStats(trades []trade) {
	m.Trades = len(trades)
	if len(trades) == 0 {
		return
	}
	var wins int
	var grossProfit, grossLoss, total float64
	for _, t := range trades {
		total += t.netPnL
		switch {
		case t.netPnL > 0:
			wins++
			grossProfit += t.netPnL
		case t.netPnL < 0:
			grossLoss -= t.netPnL
		}
	}
	m.WinRate = float64(wins) / float64(len(trades))
	m.Expectancy = total / float64(len(trades))
	if grossLoss > 0 {
		m.ProfitFactor = grossProfit / grossLoss
	}
}

// metrics summarises the replay so far.
func (d *Driver) metrics() Metrics {
	m := Metrics{
		StartEquity: d.opts.Cash,
		FinalEquity: d.opts.Cash,
		FinalCash:   d.cash,
		Positions:   map[string]float64{},
		Fills:       d.fills,
		Rejections:  d.rejections,
		Cancels:     d.cancels,
		OpenOrders:  d.openCount,
		Fees:        d.fees,
		Events:      d.marked,
		WarmupBars:  d.marked,
	}
	if d.firstOrder >= 0 {
		m.WarmupBars = d.firstOrder
	}
	eq := d.cash
	for s, p := range d.position {
		if p != 0 {
			m.Positions[d.data.symbols[s]] = p
			eq += float64(p * d.lastClose[s])
		}
	}
	if d.marked == 0 {
		return m
	}
	m.FinalEquity = eq
	m.TotalReturn = eq/d.opts.Cash - 1
	times := d.bars.Time[:d.marked]
	c := sampleCurve(times, d.equity[:d.marked])
	m.returnStats(c, d.opts.Cash)
	m.Exposure = float64(d.exposed) / float64(len(c.time))
	m.tradeStats(d.trades)
	m.BuyAndHoldReturn = buyAndHold(d.bars.Slice(0, d.marked), len(d.data.symbols))
	m.sanitize()
	return m
}

// sanitize replaces values that JSON cannot carry (which only absurd equity
// curves produce, such as a return from a near-zero equity) by 0.
func (m *Metrics) sanitize() {
	for _, f := range []*float64{
		&m.StartEquity, &m.FinalEquity, &m.FinalCash, &m.TotalReturn, &m.CAGR, &m.Volatility, &m.Sharpe, &m.Sortino,
		&m.Calmar, &m.MaxDrawdown, &m.MaxDrawdownDurationS, &m.WinRate, &m.ProfitFactor, &m.Expectancy,
		&m.Fees, &m.Exposure, &m.BuyAndHoldReturn, &m.BarIntervalS, &m.PeriodsPerYear,
	} {
		if math.IsNaN(*f) || math.IsInf(*f, 0) {
			*f = 0
		}
	}
}

// buyAndHold is the mean over symbols of the return from the first to the
// last close.
func buyAndHold(b engine.Bars, nsym int) float64 {
	first := make([]float64, nsym)
	last := make([]float64, nsym)
	for i, s := range b.Symbol {
		if first[s] == 0 {
			first[s] = b.Close[i]
		}
		last[s] = b.Close[i]
	}
	var sum float64
	var k int
	for s := range first {
		if first[s] > 0 {
			sum += last[s]/first[s] - 1
			k++
		}
	}
	if k == 0 {
		return 0
	}
	return sum / float64(k)
}
