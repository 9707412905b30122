package metrics

import (
	"math"
	"testing"
	"time"
)

// A curve worked by hand: 100 → 110 → 99 → 121 at one-day steps.
func handCurve() Curve {
	day := int64(24 * time.Hour)
	return Curve{Times: []int64{0, day, 2 * day, 3 * day}, Equity: []float64{100, 110, 99, 121}}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestPeriodStatsByHand(t *testing.T) {
	c := handCurve()
	r := c.Returns() // 0.1, −0.1, 2/9
	if !near(r[0], 0.1) || !near(r[1], -0.1) || !near(r[2], 22.0/99) {
		t.Fatalf("returns %v", r)
	}
	p := PeriodStats(c, 365.25)
	mean := (22.0 / 99) / 3 // (0.1 − 0.1 + 2/9) / 3
	var ss float64
	for _, v := range r {
		ss += (v - mean) * (v - mean)
	}
	std := math.Sqrt(ss / 2)
	checks := map[string][2]float64{
		"sharpe":       {p.Sharpe, mean / std * math.Sqrt(365.25)},
		"volatility":   {p.Volatility, std * math.Sqrt(365.25)},
		"sortino":      {p.Sortino, mean / math.Sqrt(0.01/3) * math.Sqrt(365.25)},
		"max drawdown": {p.MaxDrawdown, 0.1},
		"cagr":         {p.CAGR, math.Pow(1.21, 365.25/3) - 1},
		"ulcer":        {p.Ulcer, math.Sqrt(0.01 / 2)},
		"best":         {p.Best, 22.0 / 99},
		"worst":        {p.Worst, -0.1},
		"var":          {p.VaR95, mean - 1.6448536269514729*std},
	}
	for name, c := range checks {
		if !near(c[0], c[1]) {
			t.Errorf("%s: %v, by hand %v", name, c[0], c[1])
		}
	}
	// The drawdown from 110 lasted from day 1 to day 3.
	if p.MaxDrawdownDuration != 48*time.Hour || p.LongestUnderwater != 48*time.Hour {
		t.Errorf("durations %s %s", p.MaxDrawdownDuration, p.LongestUnderwater)
	}
	if !math.IsNaN(p.Kurtosis) || math.IsNaN(p.Skew) {
		t.Errorf("3 returns: skew %v, kurtosis %v (needs 4)", p.Skew, p.Kurtosis)
	}
}

// TestDeepestIsNotLongest: the deepest drawdown's duration and the
// longest time under water are different figures.
func TestDeepestIsNotLongest(t *testing.T) {
	h := int64(time.Hour)
	c := Curve{Times: []int64{0, h, 2 * h, 3 * h, 4 * h, 5 * h, 6 * h}, Equity: []float64{100, 50, 101, 100, 99, 100, 100.5}}
	p := PeriodStats(c, 8766)
	if p.MaxDrawdown != 0.5 || p.MaxDrawdownDuration != 2*time.Hour || p.LongestUnderwater != 4*time.Hour {
		t.Errorf("max drawdown %v for %s, longest under water %s", p.MaxDrawdown, p.MaxDrawdownDuration, p.LongestUnderwater)
	}
}

func TestTradeStatsByHand(t *testing.T) {
	h := int64(time.Hour)
	tr := []Trade{{NetPnL: 30, Return: 0.03, EntryTime: 0, ExitTime: h}, {NetPnL: -10, Return: -0.01, EntryTime: 0, ExitTime: 3 * h},
		{NetPnL: 20, Return: 0.02, EntryTime: h, ExitTime: 3 * h}, {NetPnL: -20, Return: -0.02, EntryTime: 0, ExitTime: 2 * h}}
	s := TradeStats(tr)
	mean := 5.0
	std := math.Sqrt((25*25 + 15*15 + 15*15 + 25*25) / 3.0)
	for name, c := range map[string][2]float64{"win rate": {s.WinRate, 0.5}, "profit factor": {s.ProfitFactor, 50.0 / 30},
		"payoff": {s.Payoff, 25.0 / 15}, "expectancy": {s.Expectancy, mean}, "median": {s.MedianReturn, 0.005},
		"sqn": {s.SQN, 2 * mean / std}, "best": {s.Best, 0.03}, "worst": {s.Worst, -0.02}} {
		if !near(c[0], c[1]) {
			t.Errorf("%s: %v, by hand %v", name, c[0], c[1])
		}
	}
	if s.AvgHolding != 2*time.Hour {
		t.Errorf("holding %s", s.AvgHolding)
	}
	if e := TradeStats(nil); e.Count != 0 || !math.IsNaN(e.WinRate) {
		t.Errorf("no trades: %+v", e)
	}
}

func TestMonthlyCompounds(t *testing.T) {
	jan := time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC).UnixNano()
	feb := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	c := Curve{Times: []int64{jan - 1e9, jan, feb, feb + 1e9}, Equity: []float64{100, 110, 121, 108.9}}
	m := Monthly(c)
	if len(m) != 2 || !near(m[0].Return, 0.1) || !near(m[1].Return, 108.9/110-1) {
		t.Errorf("%+v", m)
	}
}
