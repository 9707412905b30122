package tearsheet

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"stratbench/internal/units"
	"stratbench/internal/words"
	"stratbench/metrics"
	"stratbench/sweep"
)

// Reading a sweep's runs' jobs is bounded: the failed runs' messages of
// at most maxMessagesRead of them, each cut at maxMessage characters, and
// the equity curves of the maxBestCurves best runs. The runs table shows
// the first fullMessages messages so, the others cut at maxShortMessage. A message's character may take 6
// bytes in the page ('<' is \u003c in its JSON): 10,000 failed runs' take
// at most 10 × 3 KB + 9,990 × 720 bytes, 7.2 MB, which keeps the report of
// a 10,000-run sweep under 10 MB (TestSweepReportSizeBound).
const (
	maxMessagesRead = 20_000
	fullMessages    = 10
	maxMessage      = 500
	maxShortMessage = 120
	maxBestCurves   = 5
)

// Sweep is what a sweep's (or a walk-forward's) report is drawn from: its
// document and, from its runs' jobs, what the document does not carry.
type Sweep struct {
	Doc *sweep.Document
	// Messages are the failed runs' failure messages, by job id.
	Messages map[string]string
	// Best are the equity curves of the best runs, best first (a plain
	// sweep).
	Best []RunCurve
	// Folds are the equity curves of a walk-forward's test runs that
	// passed, in fold order.
	Folds []FoldCurve
	Notes []string
}

// RunCurve is the equity curve of a run of a sweep.
type RunCurve struct {
	Index  int64
	Params string
	Curve  metrics.Curve
}

// FoldCurve is the equity curve of a walk-forward fold's test run.
type FoldCurve struct {
	Fold  int
	Curve metrics.Curve
}

type sweepView struct {
	ID, Status  string
	Header      [][2]string
	Counts      [][2]string
	Robustness  *robustView
	WalkForward *wfView
	HasCurves   bool
	HasHeatmap  bool
	Notes       []string
}

type robustView struct {
	Present bool
	Null    bool
	Reason  string
	Verdict string
	Rows    [][2]string
	Lambdas bool // the λ histogram is drawn
}

type wfView struct {
	Folds      []foldRow
	Stitched   [][2]string
	Efficiency string
	// EfficiencyWhy says why Efficiency is empty (sweep.WalkForwardResult.EfficiencyWhy).
	EfficiencyWhy string
}

type foldRow struct {
	Fold                 int
	Train, Test          string
	Params               string
	InMetric, InReturn   string
	OutReturn, OutSharpe string
	OutDrawdown, Trades  string
	Job                  string
}

// sweepData is the sweep's data for the page's script.
type sweepData struct {
	Metric   string   `json:"metric"`
	Minimize bool     `json:"minimize"`
	Params   []string `json:"params"`
	// Columns of Rows after the params.
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
	// BestParams are the best run's params (the heatmap holds the others
	// at them); BestFold its fold in a walk-forward.
	BestParams []any `json:"best_params"`
	BestFold   *int  `json:"best_fold"`
	Curves     *xy   `json:"curves,omitempty"`
	// Lambdas is the histogram of the robustness block's λ values.
	Lambdas *histData `json:"lambdas,omitempty"`
}

// runMetrics are the metrics the runs table shows besides the objective.
var runMetrics = []string{"total_return", "sharpe", "max_drawdown", "trades", "win_rate"}

func (s *Sweep) view(version string) (*sweepView, *sweepData) {
	doc := s.Doc
	v := &sweepView{ID: doc.SweepID, Status: string(doc.Status), Notes: s.Notes}
	spec := doc.Spec
	grid := make([]string, 0, len(spec.Grid))
	names := make([]string, 0, len(spec.Grid))
	for _, g := range spec.Grid {
		vals := make([]string, len(g.Values))
		for i, x := range g.Values {
			vals[i] = jsonText(x)
		}
		grid = append(grid, g.Name+" ∈ {"+strings.Join(vals, ", ")+"}")
		names = append(names, g.Name)
	}
	objective := spec.Metric + " (maximised)"
	if spec.Minimize {
		objective = spec.Metric + " (minimised)"
	}
	v.Header = [][2]string{
		{"strategy", doc.Strategy.Path},
		{"sha256", doc.Strategy.SHA256},
		{"data", doc.Data.Source},
		{"window", doc.Data.From + " → " + doc.Data.To},
		{"data fingerprint", doc.Data.Fingerprint},
		{"grid", strings.Join(grid, " · ")},
		{"fixed params", valueOr(spec.Params.String(), "none")},
		{"objective", objective},
		{"executor", fmt.Sprintf("%s, %d concurrent runs", doc.Executor.Kind, spec.Jobs)},
		{"started", doc.StartedAt.UTC().Format(time.RFC3339)},
	}
	if spec.Constraint != nil {
		v.Header = append(v.Header, [2]string{"constraint", *spec.Constraint})
	}
	if spec.Random != nil {
		v.Header = append(v.Header, [2]string{"random", fmt.Sprintf("%d combinations, seed %d", *spec.Random, spec.Seed)})
	}
	if spec.WalkForward != nil {
		v.Header = append(v.Header, [2]string{"walk-forward", spec.WalkForward.String()})
	}
	if doc.FinishedAt != nil {
		v.Header = append(v.Header, [2]string{"took", units.Millis(float64(doc.DurationMS))})
	}
	for _, r := range doc.Runs {
		// The runs' Sharpe ratios (and an annualised objective) come from
		// the window the runs share: say how long, and when too short.
		if span, short, ok := words.RunAnnualSpan(r.Metrics); ok {
			note := "annualised from " + span + " of data"
			if short {
				note = words.ShortSpanMark + " " + note + ": under " + words.MinAnnualSpan() + ", too short for them to mean much"
			}
			v.Header = append(v.Header, [2]string{"Sharpe, CAGR…", note})
			break
		}
	}
	v.Header = append(v.Header, [2]string{"this report", "stratbench " + version})
	c := doc.Counts
	v.Counts = [][2]string{{"runs planned", units.Count(c.Total)}, {"done", units.Count(c.Done)},
		{"passed", units.Count(c.Passed)}, {"failed", units.Count(c.Failed)}}
	if b := doc.Best; b != nil {
		v.Counts = append(v.Counts, [2]string{"best", fmt.Sprintf("run %d (%s): %s = %s", b.Index, b.Params.String(), b.Metric, units.Number(b.Value))})
	} else {
		v.Counts = append(v.Counts, [2]string{"best", "none: no run passed"})
	}
	v.Robustness = robustness(doc)

	d := &sweepData{Metric: spec.Metric, Minimize: spec.Minimize, Params: names,
		Columns: append(append([]string{"index", "fold", "phase", "status", spec.Metric}, runMetrics...), "duration_ms", "failure", "message", "job"),
		Rows:    make([][]any, 0, len(doc.Runs))}
	if doc.Best != nil {
		for _, n := range names {
			val, _ := doc.Best.Params.Get(n)
			d.BestParams = append(d.BestParams, val)
		}
	}
	if rb := doc.Robustness; rb != nil {
		d.Lambdas = lambdaHistogram(rb.Lambdas, 40)
	}
	shown := 0 // the failed runs' messages in the table so far
	for _, r := range doc.Runs {
		var m map[string]json.RawMessage
		if len(r.Metrics) > 0 {
			json.Unmarshal(r.Metrics, &m)
		}
		row := make([]any, 0, len(names)+len(d.Columns))
		for _, n := range names {
			val, _ := r.Params.Get(n)
			row = append(row, val)
		}
		var phase any
		if r.Phase != sweep.PhaseNone {
			phase = string(r.Phase)
		}
		var kind any
		if r.FailureKind != "" {
			kind = r.FailureKind
		}
		row = append(row, r.Index, r.Fold, phase, string(r.Status), metricOf(m, spec.Metric))
		for _, k := range runMetrics {
			row = append(row, metricOf(m, k))
		}
		var msg any
		if t, ok := s.Messages[r.JobID]; ok {
			if shown++; shown > fullMessages {
				t = cutRunes(t, maxShortMessage)
			}
			msg = t
		}
		row = append(row, r.DurationMS, kind, msg, r.JobID)
		d.Rows = append(d.Rows, row)
	}
	v.HasHeatmap = len(names) >= 1 && doc.Counts.Passed > 0
	if wf := doc.WalkForward; wf != nil {
		v.WalkForward = walkForward(wf, doc.Status != sweep.StatusRunning)
		for i := len(wf.Folds) - 1; i >= 0; i-- {
			if wf.Folds[i].BestParams != nil {
				fold := i
				d.BestFold = &fold
				break
			}
		}
		if st := stitch(s.Folds); st.Len() >= 2 {
			idx := pick(st.Len(), displayBuckets, st.Equity)
			d.Curves = &xy{T: takeT(st.Times, idx), Y: []nums{takeF(st.Equity, idx)}, Labels: []string{"out of sample, stitched"}}
			v.HasCurves = true
		}
		return v, d
	}
	if len(s.Best) > 0 {
		d.Curves = overlay(s.Best)
		v.HasCurves = d.Curves != nil
	}
	return v, d
}

func valueOr(s, or string) string {
	if s == "" {
		return or
	}
	return s
}

// metricOf is a metric of a run's metrics, a number or null.
func metricOf(m map[string]json.RawMessage, key string) any {
	raw, ok := m[key]
	if !ok {
		return nil
	}
	var f float64
	if json.Unmarshal(raw, &f) != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return jsonNum(f)
}

// robustness shows the document's robustness block (docs/robustness.md):
// its verdict and figures by their keys in the document, or why it is
// null (nothing for a document of a version without it).
func robustness(doc *sweep.Document) *robustView {
	rb := doc.Robustness
	if rb == nil {
		return &robustView{Present: doc.RobustnessReason != "", Null: true, Reason: doc.RobustnessReason}
	}
	p := units.Number
	return &robustView{Present: true, Verdict: rb.Verdict, Lambdas: len(rb.Lambdas.Values) > 0, Rows: [][2]string{
		{"deflated_sharpe", p(rb.DeflatedSharpe)},
		{"pbo", p(rb.PBO)},
		{"best_psr", p(rb.BestPSR)},
		{"oos_loss_probability", p(rb.OOSLossProbability)},
		{"trials", units.Count(rb.Trials)},
		{"periods", units.Count(rb.Periods)},
		{"best_index", strconv.FormatInt(rb.BestIndex, 10)},
		{"best_sharpe", strconv.FormatFloat(rb.BestSharpe, 'g', 4, 64)},
		{"expected_max_sharpe", strconv.FormatFloat(rb.ExpectedMaxSharpe, 'g', 4, 64)},
		{"sharpe_variance", strconv.FormatFloat(rb.SharpeVariance, 'g', 4, 64)},
		{"blocks", strconv.Itoa(rb.Blocks)},
		{"combinations", units.Count(rb.Combinations)},
	}}
}

func walkForward(wf *sweep.WalkForwardResult, done bool) *wfView {
	v := &wfView{Efficiency: "–"}
	if wf.Efficiency != nil {
		v.Efficiency = units.Number(*wf.Efficiency)
	} else {
		v.EfficiencyWhy = wf.EfficiencyWhy(done)
	}
	for i, f := range wf.Folds {
		row := foldRow{Fold: i, Train: f.Train.String(), Test: f.Test.String(), Params: "–", InMetric: "–", InReturn: "–",
			OutReturn: "–", OutSharpe: "–", OutDrawdown: "–", Trades: "–", Job: "–"}
		if f.BestParams != nil {
			row.Params = f.BestParams.String()
		}
		if f.InSample != nil {
			row.InMetric = f.InSample.Metric + " " + units.Number(f.InSample.Value)
			row.InReturn = units.Percent(f.InSample.Return)
		}
		var m map[string]json.RawMessage
		if len(f.OutOfSample) > 0 && json.Unmarshal(f.OutOfSample, &m) == nil && m != nil {
			if x, ok := metricOf(m, "total_return").(jsonNum); ok {
				row.OutReturn = units.Percent(float64(x))
			}
			if x, ok := metricOf(m, "sharpe").(jsonNum); ok {
				row.OutSharpe = units.Number(float64(x))
			}
			if x, ok := metricOf(m, "max_drawdown").(jsonNum); ok {
				row.OutDrawdown = units.Percent(float64(x))
			}
			if x, ok := metricOf(m, "trades").(jsonNum); ok {
				row.Trades = units.Count(int64(x))
			}
		}
		if f.JobID != nil {
			row.Job = *f.JobID
		}
		v.Folds = append(v.Folds, row)
	}
	if st := wf.OutOfSample; st != nil {
		v.Stitched = [][2]string{{"folds stitched", units.Count(st.Folds)}, {"start equity", units.Money(st.StartEquity)},
			{"final equity", units.Money(st.FinalEquity)}, {"total return", units.Percent(st.TotalReturn)},
			{"CAGR", units.Percent(st.CAGR)}, {"fills", units.Count(st.Fills)}, {"trades", units.Count(st.Trades)}}
	}
	return v
}

// stitch chains the test windows' curves: each fold's curve scaled so
// that it starts where the one before ended (its returns compounded in
// order, as the document's stitched out-of-sample figures).
func stitch(folds []FoldCurve) metrics.Curve {
	var out metrics.Curve
	level := 0.0
	for _, f := range folds {
		c := f.Curve
		if c.Len() == 0 || c.Equity[0] == 0 {
			continue
		}
		scale := 1.0
		if out.Len() > 0 {
			scale = level / c.Equity[0]
		}
		for i := range c.Equity {
			if out.Len() > 0 && c.Times[i] <= out.Times[out.Len()-1] {
				continue
			}
			out.Times = append(out.Times, c.Times[i])
			out.Equity = append(out.Equity, c.Equity[i]*scale)
		}
		level = c.Equity[c.Len()-1] * scale
	}
	return out
}

// overlay puts the best runs' curves over one time axis, each downsampled
// on its own, null where a curve has no point.
func overlay(runs []RunCurve) *xy {
	type pt struct {
		t   int64
		run int
		v   float64
	}
	var pts []pt
	for k, r := range runs {
		idx := pick(r.Curve.Len(), displayBuckets, r.Curve.Equity)
		for _, i := range idx {
			pts = append(pts, pt{r.Curve.Times[i], k, r.Curve.Equity[i]})
		}
	}
	if len(pts) == 0 {
		return nil
	}
	sort.SliceStable(pts, func(a, b int) bool { return pts[a].t < pts[b].t })
	out := &xy{Y: make([]nums, len(runs))}
	for _, r := range runs {
		out.Labels = append(out.Labels, fmt.Sprintf("run %d (%s)", r.Index, r.Params))
	}
	for i := 0; i < len(pts); {
		t := pts[i].t
		out.T = append(out.T, seconds(t))
		for k := range out.Y {
			out.Y[k] = append(out.Y[k], math.NaN())
		}
		for ; i < len(pts) && pts[i].t == t; i++ {
			out.Y[pts[i].run][len(out.T)-1] = pts[i].v
		}
	}
	return out
}

// lambdaHistogram counts the λ values in bins equal bins from the least
// to the greatest (one bin when they are all equal); nil without values.
func lambdaHistogram(l sweep.Lambdas, bins int) *histData {
	if len(l.Values) == 0 || len(l.Values) != len(l.Counts) {
		return nil
	}
	lo, hi := l.Values[0], l.Values[len(l.Values)-1]
	if !(hi > lo) {
		return &histData{Edges: nums{lo}, Counts: []int{sumInts(l.Counts)}}
	}
	w := (hi - lo) / float64(bins)
	h := &histData{Edges: make(nums, bins), Counts: make([]int, bins)}
	for i := range h.Edges {
		h.Edges[i] = lo + float64(i)*w
	}
	for i, v := range l.Values {
		b := min(int((v-lo)/w), bins-1)
		if b >= 0 {
			h.Counts[b] += l.Counts[i]
		}
	}
	return h
}

func sumInts(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
