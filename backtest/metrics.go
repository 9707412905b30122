package backtest

import (
	"maps"
	"math"
	"math/bits"
	"slices"

	"stratbench/contract"
)

// secondsPerYear is the length of a Julian year, for annualising.
const secondsPerYear = 365.25 * 24 * 3600

// endsTimestamp reports whether event i is the last event of its timestamp:
// the equity curve of the metrics has one point per distinct timestamp, the
// equity after that event.
func endsTimestamp(times []int64, i int) bool { return i+1 == len(times) || times[i+1] != times[i] }

// curveStats computes the return-based metrics of an equity curve as its
// points come, in constant memory: one point per distinct timestamp, in
// increasing time.
//
// The sum of the returns, and so their mean, is summed in the same order as
// a pass over the whole curve would. The variance is Welford's: its last
// bits may differ from a second pass over the returns (a relative
// difference around 1e-15), which sharpe and volatility inherit.
type curveStats struct {
	start float64 // the start equity: the first peak

	points              int
	firstTime, lastTime int64
	last                float64 // the equity of the last point

	// Returns between consecutive points.
	sum         float64 // Σ r, in order
	mean, m2    float64 // Welford's running mean and sum of squared deviations
	downSquares float64 // Σ r² over r < 0

	// Drawdown from the running peak.
	peak                float64
	peakTime            int64
	under               bool
	maxDrawdown, maxDur float64

	gaps gapMedian // between consecutive timestamps
}

func newCurveStats(start float64) curveStats {
	return curveStats{start: start, peak: start}
}

// add takes the next point of the curve: the equity e after the last event
// at time t.
func (c *curveStats) add(t int64, e float64) {
	if c.points == 0 {
		c.firstTime, c.peakTime = t, t
	} else {
		c.gaps.add(t - c.lastTime)
		r := 0.0
		if prev := c.last; prev != 0 {
			r = (e - prev) / math.Abs(prev)
		}
		c.sum += r
		n := float64(c.points) // returns so far, this one included
		delta := r - c.mean
		c.mean += delta / n
		c.m2 += delta * (r - c.mean)
		if r < 0 {
			c.downSquares += r * r
		}
	}
	c.points++
	c.lastTime, c.last = t, e
	// The start equity is the first peak, at the first timestamp; the
	// drawdown lasts from a peak until the equity is back at it.
	if e >= c.peak {
		if c.under {
			c.maxDur = max(c.maxDur, float64(t-c.peakTime)/1e9)
		}
		c.peak, c.peakTime, c.under = e, t, false
		return
	}
	c.under = true
	if c.peak > 0 {
		c.maxDrawdown = max(c.maxDrawdown, (c.peak-e)/c.peak)
	}
}

// result sets the return-based metrics of the curve so far.
func (c *curveStats) result(m *contract.Metrics) {
	k := c.points
	if k == 0 {
		return
	}
	span := float64(c.lastTime-c.firstTime) / 1e9
	m.SpanS = span
	if k >= 2 {
		m.BarIntervalS = c.gaps.median()
	}
	if span > 0 {
		years := span / secondsPerYear
		m.PeriodsPerYear = float64(k-1) / years
		switch final := c.last; {
		case final <= 0:
			m.CAGR = -1
		default:
			if g := math.Pow(final/c.start, 1/years) - 1; !math.IsInf(g, 0) && !math.IsNaN(g) {
				m.CAGR = g
			}
		}
	}
	if nret := k - 1; nret >= 2 && m.PeriodsPerYear > 0 {
		mean := c.sum / float64(nret)
		std := math.Sqrt(c.m2 / float64(nret-1))
		annual := math.Sqrt(m.PeriodsPerYear)
		m.Volatility = std * annual
		if std > 0 {
			m.Sharpe = mean / std * annual
		}
		if down := math.Sqrt(c.downSquares / float64(nret)); down > 0 {
			m.Sortino = mean / down * annual
		}
	}
	m.MaxDrawdown = c.maxDrawdown
	m.MaxDrawdownDurationS = c.maxDur
	if c.under {
		m.MaxDrawdownDurationS = max(m.MaxDrawdownDurationS, float64(c.lastTime-c.peakTime)/1e9)
	}
	if m.MaxDrawdown > 0 {
		m.Calmar = m.CAGR / m.MaxDrawdown
	}
}

// maxExactGaps is how many distinct gaps gapMedian counts exactly. Bar data
// has a handful (the bar interval, nights, weekends, holidays); past this
// many, the gaps go to a log-linear histogram.
const maxExactGaps = 4096

// gapMedian finds the median of the gaps between consecutive timestamps in
// bounded memory: exactly while there are at most maxExactGaps distinct
// gaps, and within 0.8% (a histogram bucket's half width) beyond.
type gapMedian struct {
	n     int64
	exact map[int64]int64 // gap -> count; nil once hist is used
	hist  []int64         // counts by gapBucket
	// A run of equal gaps is counted here before it goes to exact or
	// hist: regular bars cost no map lookup.
	run, runCount int64
}

func (g *gapMedian) add(gap int64) {
	g.n++
	if g.runCount > 0 && gap == g.run {
		g.runCount++
		return
	}
	g.commit()
	g.run, g.runCount = gap, 1
}

// commit counts the pending run.
func (g *gapMedian) commit() {
	if g.runCount == 0 {
		return
	}
	gap, count := g.run, g.runCount
	g.runCount = 0
	if g.hist == nil {
		if g.exact == nil {
			g.exact = map[int64]int64{}
		}
		if _, ok := g.exact[gap]; ok || len(g.exact) < maxExactGaps {
			g.exact[gap] += count
			return
		}
		g.hist = make([]int64, gapBuckets)
		for v, c := range g.exact {
			g.hist[gapBucket(v)] += c
		}
		g.exact = nil
	}
	g.hist[gapBucket(gap)] += count
}

// median returns the median gap in seconds: the mean of the two middle gaps
// for an even count.
func (g *gapMedian) median() float64 {
	if g.n == 0 {
		return 0
	}
	g.commit()
	// The elements at ranks lo and hi (equal for an odd count) of the
	// sorted gaps.
	lo, hi := (g.n-1)/2, g.n/2
	var atLo, atHi int64
	var seen int64
	take := func(gap, count int64) bool {
		next := seen + count
		if lo >= seen && lo < next {
			atLo = gap
		}
		if hi >= seen && hi < next {
			atHi = gap
			return true
		}
		seen = next
		return false
	}
	if g.hist == nil {
		for _, gap := range slices.Sorted(maps.Keys(g.exact)) {
			if take(gap, g.exact[gap]) {
				break
			}
		}
	} else {
		for b, count := range g.hist {
			if count > 0 && take(gapValue(b), count) {
				break
			}
		}
	}
	return float64(atLo+atHi) / 2 / 1e9
}

// The histogram of gaps: values below 128 ns exactly, then 64 buckets per
// power of two.
const (
	gapSubBits = 6
	gapBuckets = 2<<gapSubBits + (63-gapSubBits)<<gapSubBits
)

func gapBucket(v int64) int {
	if v < 2<<gapSubBits {
		return int(max(v, 0))
	}
	e := bits.Len64(uint64(v)) - 1 // 2^e <= v < 2^(e+1), e > gapSubBits
	sub := int(v>>(e-gapSubBits)) & (1<<gapSubBits - 1)
	return 2<<gapSubBits + (e-gapSubBits-1)<<gapSubBits + sub
}

// gapValue is the middle of bucket b.
func gapValue(b int) int64 {
	if b < 2<<gapSubBits {
		return int64(b)
	}
	b -= 2 << gapSubBits
	e := b>>gapSubBits + gapSubBits + 1
	sub := int64(b & (1<<gapSubBits - 1))
	lo := (1<<gapSubBits + sub) << (e - gapSubBits)
	return lo + int64(1)<<(e-gapSubBits)/2
}

// tradeStats computes the metrics of closed round trips as they close, in
// the order a pass over them would.
type tradeStats struct {
	trades, wins                  int
	grossProfit, grossLoss, total float64
}

func (s *tradeStats) add(netPnL float64) {
	s.trades++
	s.total += netPnL
	switch {
	case netPnL > 0:
		s.wins++
		s.grossProfit += netPnL
	case netPnL < 0:
		s.grossLoss -= netPnL
	}
}

// result sets the trade metrics.
func (s *tradeStats) result(m *contract.Metrics) {
	m.Trades = s.trades
	if s.trades == 0 {
		return
	}
	m.WinRate = float64(s.wins) / float64(s.trades)
	m.Expectancy = s.total / float64(s.trades)
	if s.grossLoss > 0 {
		m.ProfitFactor = s.grossProfit / s.grossLoss
	}
}

// metrics summarises the replay so far. It completes the equity curve
// (see finishCurve), so it is called once.
func (d *Driver) metrics() contract.Metrics {
	m := contract.Metrics{
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
			m.Positions[d.symbols[s]] = p
			eq += float64(p * d.lastClose[s])
		}
	}
	if d.marked == 0 {
		return m
	}
	m.FinalEquity = eq
	m.TotalReturn = eq/d.opts.Cash - 1
	d.finishCurve()
	d.curve.result(&m)
	m.Exposure = float64(d.exposed) / float64(d.curve.points)
	d.tradeStats.result(&m)
	m.BuyAndHoldReturn = buyAndHold(d.firstClose, d.lastClose)
	sanitize(&m)
	return m
}

// finishCurve adds the last marked event to the curve when the replay
// stopped inside a timestamp: the curve then ends with the equity after it.
func (d *Driver) finishCurve() {
	if d.marked > 0 && !d.markedEnds {
		d.curve.add(d.markedTime, d.lastEquity)
	}
}

// sanitize replaces values that JSON cannot carry (which only absurd equity
// curves produce, such as a return from a near-zero equity) by 0.
func sanitize(m *contract.Metrics) {
	for _, f := range []*float64{
		&m.StartEquity, &m.FinalEquity, &m.FinalCash, &m.TotalReturn, &m.CAGR, &m.Volatility, &m.Sharpe, &m.Sortino,
		&m.Calmar, &m.MaxDrawdown, &m.MaxDrawdownDurationS, &m.WinRate, &m.ProfitFactor, &m.Expectancy,
		&m.Fees, &m.Exposure, &m.BuyAndHoldReturn, &m.BarIntervalS, &m.PeriodsPerYear, &m.SpanS,
	} {
		if math.IsNaN(*f) || math.IsInf(*f, 0) {
			*f = 0
		}
	}
}

// buyAndHold is the mean over symbols of the return from the first to the
// last close (0 for a symbol without bars).
func buyAndHold(first, last []float64) float64 {
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
