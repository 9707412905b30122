package metrics

import (
	"math"
	"sort"
	"time"
)

// SecondsPerYear is a Julian year, the year of every annualised figure.
const SecondsPerYear = 365.25 * 24 * 3600

// Curve is an equity curve: one point per distinct timestamp, in
// increasing time (unix nanoseconds), the equity after the last event of
// that timestamp.
type Curve struct {
	Times  []int64
	Equity []float64
}

// Len is the number of points.
func (c Curve) Len() int { return len(c.Equity) }

// Returns are the curve's period returns: n − 1 of them for n points,
// return i between points i and i+1.
func (c Curve) Returns() []float64 {
	if len(c.Equity) < 2 {
		return nil
	}
	out := make([]float64, len(c.Equity)-1)
	for i := 1; i < len(c.Equity); i++ {
		if prev := c.Equity[i-1]; prev != 0 {
			out[i-1] = (c.Equity[i] - prev) / math.Abs(prev)
		}
	}
	return out
}

// Years is the curve's span in Julian years.
func (c Curve) Years() float64 {
	if len(c.Times) < 2 {
		return 0
	}
	return float64(c.Times[len(c.Times)-1]-c.Times[0]) / 1e9 / SecondsPerYear
}

// PeriodsPerYear is the returns the curve had per year of its span: how
// the report's periods_per_year is found (0 for a span of zero).
func (c Curve) PeriodsPerYear() float64 {
	y := c.Years()
	if y <= 0 {
		return 0
	}
	return float64(len(c.Equity)-1) / y
}

// Periods are the figures of an equity curve's returns.
type Periods struct {
	Returns    int     // how many
	CAGR       float64 // (last / first)^(1/years) − 1, years = returns / periods per year
	Volatility float64 // std × √periods per year
	Sharpe     float64 // mean / std × √periods per year
	Sortino    float64 // mean / √(Σ min(r, 0)² / n) × √periods per year
	Calmar     float64 // CAGR / max drawdown
	// MaxDrawdown is the largest fall from a running peak, a fraction of
	// the peak (0.12 is 12 %); the first point is the first peak.
	MaxDrawdown float64
	// MaxDrawdownDuration is how long the deepest drawdown lasted, from
	// its peak until the equity was back at it (or the end).
	MaxDrawdownDuration time.Duration
	// LongestUnderwater is the longest time from a peak until the equity
	// was back at it (or the end): the report's max_drawdown_duration_s.
	LongestUnderwater time.Duration
	// Ulcer is the ulcer index: √(Σ ddᵢ² / (n − 1)) over the drawdowns
	// (eᵢ / peakᵢ − 1) at the n returns.
	Ulcer float64
	// Skew and Kurtosis are the returns' sample skewness and excess
	// kurtosis (the bias-corrected estimators pandas uses).
	Skew, Kurtosis float64
	// VaR95 and CVaR95 are the parametric (normal) value at risk at 95 %
	// of one period, mean + std·Φ⁻¹(0.05), and the normal expected
	// shortfall beyond it, mean − std·φ(Φ⁻¹(0.05))/0.05: negative numbers,
	// a loss.
	VaR95, CVaR95 float64
	// Best and Worst are the highest and lowest period return.
	Best, Worst float64
}

// z05 is Φ⁻¹(0.05), the standard normal's 5 % quantile.
const z05 = -1.6448536269514729

// PeriodStats computes the figures of c's returns, annualised with
// periodsPerYear. Figures that need more returns than c has are NaN.
func PeriodStats(c Curve, periodsPerYear float64) Periods {
	nan := math.NaN()
	p := Periods{CAGR: nan, Volatility: nan, Sharpe: nan, Sortino: nan, Calmar: nan, Ulcer: nan,
		Skew: nan, Kurtosis: nan, VaR95: nan, CVaR95: nan, Best: nan, Worst: nan}
	r := c.Returns()
	n := len(r)
	p.Returns = n
	dd := drawdowns(c)
	p.MaxDrawdown, p.MaxDrawdownDuration, p.LongestUnderwater = dd.max, dd.deepestDur, dd.longest
	if n == 0 {
		return p
	}
	p.Best, p.Worst = r[0], r[0]
	for _, v := range r {
		p.Best, p.Worst = max(p.Best, v), min(p.Worst, v)
	}
	if periodsPerYear > 0 && c.Equity[0] != 0 {
		years := float64(n) / periodsPerYear
		if g := c.Equity[n] / c.Equity[0]; g >= 0 {
			p.CAGR = math.Pow(g, 1/years) - 1
		}
		if p.MaxDrawdown > 0 {
			p.Calmar = p.CAGR / p.MaxDrawdown
		}
	}
	if n >= 2 {
		var ss float64
		for _, v := range dd.series[1:] {
			ss += v * v
		}
		p.Ulcer = math.Sqrt(ss / float64(n-1))
	}
	m := moments(r)
	if n >= 2 {
		std := math.Sqrt(m.m2 / float64(n-1))
		annual := math.Sqrt(periodsPerYear)
		p.Volatility = std * annual
		if std > 0 {
			p.Sharpe = m.mean / std * annual
		}
		p.VaR95 = m.mean + std*z05
		p.CVaR95 = m.mean
		if std > 0 {
			p.CVaR95 = m.mean - std*math.Exp(-z05*z05/2)/math.Sqrt(2*math.Pi)/0.05
		}
	}
	if down := math.Sqrt(m.down / float64(n)); down > 0 {
		p.Sortino = m.mean / down * math.Sqrt(periodsPerYear)
	}
	p.Skew, p.Kurtosis = m.skew(n), m.kurtosis(n)
	return p
}

// sums are the central moments' sums of a sample.
type sums struct {
	mean, m2, m3, m4 float64
	down             float64 // Σ r² over r < 0
}

func moments(r []float64) sums {
	var s sums
	for _, v := range r {
		s.mean += v
		if v < 0 {
			s.down += v * v
		}
	}
	s.mean /= float64(len(r))
	for _, v := range r {
		d := v - s.mean
		d2 := d * d
		s.m2 += d2
		s.m3 += d2 * d
		s.m4 += d2 * d2
	}
	return s
}

// fpZero is below what pandas takes for a rounding error of a sum of
// squared deviations (it zeroes them).
const fpZero = 1e-14

// skew is the adjusted Fisher–Pearson skewness, as pandas' Series.skew.
func (s sums) skew(n int) float64 {
	if n < 3 {
		return math.NaN()
	}
	m2, m3 := zeroFP(s.m2), zeroFP(s.m3)
	if m2 == 0 {
		return 0
	}
	c := float64(n)
	return c * math.Sqrt(c-1) / (c - 2) * (m3 / math.Pow(m2, 1.5))
}

// kurtosis is the bias-corrected excess kurtosis, as pandas'
// Series.kurtosis.
func (s sums) kurtosis(n int) float64 {
	if n < 4 {
		return math.NaN()
	}
	m2, m4 := zeroFP(s.m2), zeroFP(s.m4)
	if m2 == 0 {
		return 0
	}
	c := float64(n)
	adj := 3 * (c - 1) * (c - 1) / ((c - 2) * (c - 3))
	return c*(c+1)*(c-1)*m4/((c-2)*(c-3)*m2*m2) - adj
}

func zeroFP(v float64) float64 {
	if math.Abs(v) < fpZero {
		return 0
	}
	return v
}

// drawdownInfo is the drawdown series of a curve and its episodes.
type drawdownInfo struct {
	series              []float64 // eᵢ / peakᵢ − 1, ≤ 0
	max                 float64   // the deepest, as a positive fraction
	deepestDur, longest time.Duration
}

func drawdowns(c Curve) drawdownInfo {
	var d drawdownInfo
	if c.Len() == 0 {
		return d
	}
	d.series = make([]float64, c.Len())
	peak, peakAt := c.Equity[0], c.Times[0]
	under, depth := false, 0.0 // the episode in progress
	end := func(at int64) {
		dur := time.Duration(at - peakAt)
		d.longest = max(d.longest, dur)
		if depth >= d.max && depth > 0 {
			d.max, d.deepestDur = depth, dur
		}
	}
	for i, e := range c.Equity {
		if e >= peak {
			if under {
				end(c.Times[i])
			}
			peak, peakAt, under, depth = e, c.Times[i], false, 0
			continue
		}
		under = true
		if peak > 0 {
			d.series[i] = e/peak - 1
			depth = max(depth, -d.series[i])
		}
	}
	if under {
		end(c.Times[c.Len()-1])
	}
	return d
}

// Drawdown is the curve's underwater series: eᵢ / peakᵢ − 1 at every
// point (0 at a peak, −0.12 for 12 % below it).
func Drawdown(c Curve) []float64 { return drawdowns(c).series }

// PeriodReturn is the compounded return of one calendar period (UTC).
type PeriodReturn struct {
	Start  time.Time // the period's first instant: a month's or a day's
	Return float64
}

// Monthly returns the compounded return of every calendar month (UTC)
// the curve has returns in: the product of (1 + rᵢ) over the returns whose
// point falls in the month, less 1 (quantstats' monthly returns).
func Monthly(c Curve) []PeriodReturn {
	return byPeriod(c, func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC) })
}

// Daily is Monthly by calendar day (UTC).
func Daily(c Curve) []PeriodReturn {
	return byPeriod(c, func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC) })
}

func byPeriod(c Curve, start func(time.Time) time.Time) []PeriodReturn {
	r := c.Returns()
	var out []PeriodReturn
	var lo, hi int64 // the current period, [lo, hi) in unix ns
	for i, v := range r {
		if t := c.Times[i+1]; len(out) == 0 || t < lo || t >= hi {
			s := start(time.Unix(0, t).UTC())
			// The period's end: the start of the instant a day (or a
			// month) of 31 days later, whichever period that is in.
			lo, hi = s.UnixNano(), start(s.AddDate(0, 0, 32)).UnixNano()
			if d := start(s.Add(25 * time.Hour)); d.After(s) && d.UnixNano() < hi {
				hi = d.UnixNano()
			}
			out = append(out, PeriodReturn{Start: s, Return: 1})
		}
		out[len(out)-1].Return *= 1 + v
	}
	for i := range out {
		out[i].Return--
	}
	return out
}

// RollingSharpe is the Sharpe ratio of every window of w consecutive
// returns, annualised with periodsPerYear: value i is that of the returns
// i−w+1 … i, NaN for i < w−1 and for a window without variance
// (quantstats' rolling_sharpe).
func RollingSharpe(returns []float64, w int, periodsPerYear float64) []float64 {
	out := make([]float64, len(returns))
	annual := math.Sqrt(periodsPerYear)
	// Sums over the window, recomputed every w steps so that rounding
	// does not drift.
	var sum, sq float64
	for i := range returns {
		if i%w == 0 && i >= w {
			sum, sq = 0, 0
			for _, v := range returns[i-w+1 : i] {
				sum += v
				sq += v * v
			}
		} else if i >= w {
			old := returns[i-w]
			sum -= old
			sq -= old * old
		}
		v := returns[i]
		sum += v
		sq += v * v
		if i < w-1 {
			out[i] = math.NaN()
			continue
		}
		mean := sum / float64(w)
		variance := (sq - sum*mean) / float64(w-1)
		if variance <= 1e-15*sq/float64(w) {
			// No variance (a flat stretch), up to rounding.
			out[i] = math.NaN()
			continue
		}
		out[i] = mean / math.Sqrt(variance) * annual
	}
	return out
}

// RollingWindow is the window of the rolling Sharpe for n returns and the
// periods per year: half a year of periods when the data spans more than
// a year (quantstats' 126 of 252 days), else a tenth of the returns; at
// least 10 returns, at most all of them.
func RollingWindow(n int, periodsPerYear float64) int {
	w := n / 10
	if half := int(periodsPerYear / 2); float64(n) > periodsPerYear && half > 0 {
		w = half
	}
	return min(max(w, 10), n)
}

// Histogram counts values in bins equal bins over [min, max]: the bins'
// lower edges and counts. Nothing for no values.
func Histogram(values []float64, bins int) (edges []float64, counts []int) {
	if len(values) == 0 || bins <= 0 {
		return nil, nil
	}
	lo, hi := values[0], values[0]
	for _, v := range values {
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi == lo {
		return []float64{lo}, []int{len(values)}
	}
	width := (hi - lo) / float64(bins)
	edges, counts = make([]float64, bins), make([]int, bins)
	for i := range edges {
		edges[i] = lo + float64(i)*width
	}
	for _, v := range values {
		counts[min(int((v-lo)/width), bins-1)]++
	}
	return edges, counts
}

// median of a sorted copy of v (NaN for none).
func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
