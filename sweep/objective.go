package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// DefaultMetric is the objective when --metric is not given.
const DefaultMetric = "sharpe"

// metricKeys are the numeric keys of a job report's "metrics" object: what
// --metric may name. (positions, a map, is not one.) A test keeps this
// list equal to the simulator's metrics.
var metricKeys = []string{
	"buy_and_hold_return", "calmar", "cagr", "cancels", "bar_interval_s", "events",
	"expectancy", "exposure", "fees", "fills", "final_cash", "final_equity",
	"max_drawdown", "max_drawdown_duration_s", "open_orders", "periods_per_year",
	"profit_factor", "rejections", "sharpe", "sortino", "span_s", "start_equity", "total_return",
	"trades", "volatility", "warmup_bars", "win_rate",
}

// MetricKeys returns the metrics an objective may rank by, sorted.
func MetricKeys() []string {
	keys := slices.Clone(metricKeys)
	slices.Sort(keys)
	return keys
}

// Objective is what a sweep ranks its runs by: one metric of the job
// report, maximised unless Minimize.
type Objective struct {
	// Metric is a key of the report's "metrics" object, such as "sharpe".
	Metric string
	// Minimize ranks lower values first.
	Minimize bool
}

// checkMetric refuses a metric that is not a numeric key of the metrics.
func checkMetric(name string) error {
	if slices.Contains(metricKeys, name) {
		return nil
	}
	return usage(FieldMetric, name, "not a metric of the job report (metrics: "+strings.Join(MetricKeys(), ", ")+")")
}

// Value returns r's objective value; ok is false when r did not pass or
// its metrics lack the metric.
func (o Objective) Value(r *Result) (v float64, ok bool) {
	if r.Status != RunPassed {
		return 0, false
	}
	return metricValue(r.Metrics, o.Metric)
}

// metricValue reads one numeric member of a metrics object.
func metricValue(metrics json.RawMessage, name string) (float64, bool) {
	if len(metrics) == 0 {
		return 0, false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(metrics, &m); err != nil {
		return 0, false
	}
	raw, ok := m[name]
	if !ok || bytes.Equal(raw, []byte("null")) {
		return 0, false
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, false
	}
	return v, true
}

// ranked is a result with its objective value, read once.
type ranked struct {
	r     *Result
	value float64
	ok    bool // passed and has the metric
}

// before reports whether a ranks before b: passed runs with the metric
// first, better values first, ties to the lower index; then passed runs
// without the metric, then failed runs, each by index.
func (o Objective) before(a, b ranked) bool {
	if a.ok != b.ok {
		return a.ok
	}
	if ap, bp := a.r.Status == RunPassed, b.r.Status == RunPassed; ap != bp {
		return ap
	}
	if a.ok && a.value != b.value {
		if o.Minimize {
			return a.value < b.value
		}
		return a.value > b.value
	}
	return a.r.Index < b.r.Index
}

// Best returns the best passed run of results, or nil when none passed.
// Ties go to the lower index.
func (o Objective) Best(results []Result) *Best {
	var best ranked
	for i := range results {
		c := o.rank(&results[i])
		if c.ok && (best.r == nil || o.before(c, best)) {
			best = c
		}
	}
	if best.r == nil {
		return nil
	}
	return &Best{Index: best.r.Index, Params: best.r.Params, Metric: o.Metric, Value: best.value, JobID: best.r.JobID}
}

func (o Objective) rank(r *Result) ranked {
	v, ok := o.Value(r)
	return ranked{r: r, value: v, ok: ok}
}

// Sort orders results as the sweep document lists them: grouped by fold
// (a plain sweep has none) and phase (train before test), and within a
// group by the objective, best first, ties to the lower index, failed runs
// last.
func (o Objective) Sort(results []Result) {
	keyed := make([]ranked, len(results))
	for i := range results {
		keyed[i] = o.rank(&results[i])
	}
	slices.SortStableFunc(keyed, func(a, b ranked) int {
		if c := compareGroup(a.r, b.r); c != 0 {
			return c
		}
		switch {
		case o.before(a, b):
			return -1
		case o.before(b, a):
			return 1
		}
		return 0
	})
	sorted := make([]Result, len(results))
	for i, k := range keyed {
		sorted[i] = *k.r
	}
	copy(results, sorted)
}

// compareGroup orders results by fold (none first) and phase.
func compareGroup(a, b *Result) int {
	fa, fb := -1, -1
	if a.Fold != nil {
		fa = *a.Fold
	}
	if b.Fold != nil {
		fb = *b.Fold
	}
	if fa != fb {
		if fa < fb {
			return -1
		}
		return 1
	}
	return a.Phase.order() - b.Phase.order()
}

// String describes the objective for messages: "sharpe (maximised)".
func (o Objective) String() string {
	if o.Minimize {
		return fmt.Sprintf("%s (minimised)", o.Metric)
	}
	return fmt.Sprintf("%s (maximised)", o.Metric)
}
