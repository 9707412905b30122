package contract

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"stratbench/internal/units"
)

// Metrics is the performance summary of a replay, the report's "metrics"
// object; docs/fills-and-metrics.md defines every field. Values that
// would be undefined (no trades, no variance, no time elapsed) are 0, never
// NaN or infinite. The JSON field order is the report's.
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
	// SpanS is the time the equity curve spans, its first point to its
	// last: what the annualised figures (Annualised) extrapolate to a
	// year. 0 in reports of older versions.
	SpanS float64 `json:"span_s"`
}

// MinAnnualSpan is the shortest span from which an annualised figure
// (sharpe, sortino, cagr, calmar, volatility) is shown without a mark:
// under a quarter of a year, the standard error of an annualised Sharpe
// ratio, √((1 + SR²/2) / years), is 2 or more whatever the ratio (a Sharpe
// of 2 cannot be told from 0), and CAGR compounds the window's return
// over four times and more (docs/fills-and-metrics.md).
const MinAnnualSpan = 90 * 24 * time.Hour

// AnnualSpan returns the span the annualised figures come from, and
// whether it is shorter than MinAnnualSpan; ok is false when the report
// does not say (older versions) or the curve spans no time.
func (m *Metrics) AnnualSpan() (span time.Duration, short, ok bool) {
	if m == nil || m.SpanS <= 0 || math.IsNaN(m.SpanS) || math.IsInf(m.SpanS, 0) || m.SpanS > 1e12 {
		return 0, false, false
	}
	span = time.Duration(m.SpanS * float64(time.Second))
	return span, span < MinAnnualSpan, true
}

// Unit says how a metric reads.
type Unit uint8

// Units of the metrics.
const (
	UnitNumber    Unit = iota // a plain ratio: sharpe, profit_factor
	UnitMoney                 // cash: final_equity, fees
	UnitFraction              // a share or a return: 0.12 is 12 %
	UnitCount                 // fills, trades, events
	UnitSeconds               // a span of time, in seconds
	UnitPositions             // the positions still held, by symbol
)

// Metric is one metric as every printer shows it.
type Metric struct {
	Key   string // the JSON key, e.g. "final_equity"
	Unit  Unit
	Value float64 // 0 for positions
	// Core marks the keys every report carries (docs/report.md); printers show them first, in List's order.
	Core bool
	// Annualised marks the figures extrapolated to a year from the
	// curve's span (Metrics.AnnualSpan): a printer marks them when the
	// span is short.
	Annualised bool

	positions string // PositionsText, for UnitPositions
}

// metricList is the one list of the metrics and their units: the report
// keys every report carries first, in the order printers show them, then the
// others by key. A test keeps it equal to Metrics' fields.
var metricList = []struct {
	key  string
	unit Unit
	core bool
	get  func(*Metrics) float64
}{
	// (The annualised ones are in annualisedKeys.)
	{"start_equity", UnitMoney, true, func(m *Metrics) float64 { return m.StartEquity }},
	{"final_equity", UnitMoney, true, func(m *Metrics) float64 { return m.FinalEquity }},
	{"total_return", UnitFraction, true, func(m *Metrics) float64 { return m.TotalReturn }},
	{"sharpe", UnitNumber, true, func(m *Metrics) float64 { return m.Sharpe }},
	{"max_drawdown", UnitFraction, true, func(m *Metrics) float64 { return m.MaxDrawdown }},
	{"fills", UnitCount, true, func(m *Metrics) float64 { return float64(m.Fills) }},
	{"trades", UnitCount, true, func(m *Metrics) float64 { return float64(m.Trades) }},
	{"win_rate", UnitFraction, true, func(m *Metrics) float64 { return m.WinRate }},
	{"fees", UnitMoney, true, func(m *Metrics) float64 { return m.Fees }},
	{"bar_interval_s", UnitSeconds, false, func(m *Metrics) float64 { return m.BarIntervalS }},
	{"buy_and_hold_return", UnitFraction, false, func(m *Metrics) float64 { return m.BuyAndHoldReturn }},
	{"cagr", UnitFraction, false, func(m *Metrics) float64 { return m.CAGR }},
	{"calmar", UnitNumber, false, func(m *Metrics) float64 { return m.Calmar }},
	{"cancels", UnitCount, false, func(m *Metrics) float64 { return float64(m.Cancels) }},
	{"events", UnitCount, false, func(m *Metrics) float64 { return float64(m.Events) }},
	{"expectancy", UnitMoney, false, func(m *Metrics) float64 { return m.Expectancy }},
	{"exposure", UnitFraction, false, func(m *Metrics) float64 { return m.Exposure }},
	{"final_cash", UnitMoney, false, func(m *Metrics) float64 { return m.FinalCash }},
	{"max_drawdown_duration_s", UnitSeconds, false, func(m *Metrics) float64 { return m.MaxDrawdownDurationS }},
	{"open_orders", UnitCount, false, func(m *Metrics) float64 { return float64(m.OpenOrders) }},
	{"periods_per_year", UnitNumber, false, func(m *Metrics) float64 { return m.PeriodsPerYear }},
	{"positions", UnitPositions, false, func(m *Metrics) float64 { return 0 }},
	{"profit_factor", UnitNumber, false, func(m *Metrics) float64 { return m.ProfitFactor }},
	{"rejections", UnitCount, false, func(m *Metrics) float64 { return float64(m.Rejections) }},
	{"sortino", UnitNumber, false, func(m *Metrics) float64 { return m.Sortino }},
	{"span_s", UnitSeconds, false, func(m *Metrics) float64 { return m.SpanS }},
	{"volatility", UnitFraction, false, func(m *Metrics) float64 { return m.Volatility }},
	{"warmup_bars", UnitCount, false, func(m *Metrics) float64 { return float64(m.WarmupBars) }},
}

// annualisedKeys are the metrics extrapolated to a year.
var annualisedKeys = map[string]bool{"sharpe": true, "sortino": true, "cagr": true, "calmar": true, "volatility": true}

// AnnualisedKeys returns the keys of the annualised metrics, in the order
// printers show them.
func AnnualisedKeys() []string {
	var keys []string
	for _, e := range metricList {
		if annualisedKeys[e.key] {
			keys = append(keys, e.key)
		}
	}
	return keys
}

// List returns every metric of m in the order printers show them: the core
// keys first, then the others by key.
func (m *Metrics) List() []Metric {
	out := make([]Metric, len(metricList))
	for i, e := range metricList {
		out[i] = Metric{Key: e.key, Unit: e.unit, Value: e.get(m), Core: e.core, Annualised: annualisedKeys[e.key]}
		if e.unit == UnitPositions {
			out[i].positions = m.PositionsText()
		}
	}
	return out
}

// CoreMetricKeys returns the keys every report's metrics carry, in the
// order printers show them.
func CoreMetricKeys() []string {
	var keys []string
	for _, e := range metricList {
		if e.core {
			keys = append(keys, e.key)
		}
	}
	return keys
}

// Text formats the metric's value for people, in its unit: money with two
// decimals and thousands separators, fractions as percentages, durations
// as durations, positions as PositionsText.
func (mt Metric) Text() string {
	v := mt.Value
	switch mt.Unit {
	case UnitPositions:
		return mt.positions
	case UnitMoney:
		return units.Money(v)
	case UnitFraction:
		return units.Percent(v)
	case UnitCount:
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return units.Count(int64(v))
		}
	case UnitSeconds:
		if !math.IsNaN(v) && !math.IsInf(v, 0) && math.Abs(v) < 1e9 {
			return units.Duration(time.Duration(v * float64(time.Second)))
		}
	}
	return units.Number(v)
}

// PositionsText formats the positions still held: "SYNA 10 · SYNB -2.5",
// by symbol, or "none". Symbols come from the data file, so a printer that
// writes to a terminal still passes the text through termtext.
func (m *Metrics) PositionsText() string {
	if len(m.Positions) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m.Positions))
	for k := range m.Positions {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " " + strconvFloat(m.Positions[k])
	}
	return strings.Join(parts, " · ")
}

// strconvFloat writes a quantity as short as it is exact.
func strconvFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
