package sweep

import (
	"encoding/json"
	"math"
	"time"
)

// Status is a sweep's status.
type Status string

// Sweep statuses: running until it ends; passed when every run passed,
// failed when it finished and some run failed, stopped when a signal
// stopped it (resumable).
const (
	StatusRunning Status = "running"
	StatusPassed  Status = "passed"
	StatusFailed  Status = "failed"
	StatusStopped Status = "stopped"
)

// Best is the best passed run of a sweep: the sweep document's "best".
type Best struct {
	// Index is the run's combination index.
	Index int64 `json:"index"`
	// Params are its swept params.
	Params Params `json:"params"`
	// Metric is the objective's metric, Value the run's value of it.
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
	// JobID is the run's job.
	JobID string `json:"job_id"`
}

// StrategyRef identifies the strategy file a sweep runs; a resume refuses
// a file whose sha256 changed.
type StrategyRef struct {
	// Path is the strategy file as the job reports name it.
	Path string `json:"path"`
	// SHA256 is the file's content hash when the sweep started.
	SHA256 string `json:"sha256"`
}

// DataRef identifies the data a sweep runs over; a resume refuses data
// whose fingerprint changed.
type DataRef struct {
	// Source, From and To are as in a job report's "data".
	Source string `json:"source"`
	From   string `json:"from"`
	To     string `json:"to"`
	// Fingerprint hashes the data the sweep's runs read.
	Fingerprint string `json:"fingerprint"`
}

// ExecutorKind says where a sweep's runs run.
type ExecutorKind string

// Executors.
const (
	ExecutorLocal ExecutorKind = "local"
	ExecutorRay   ExecutorKind = "ray"
)

// Executor is the sweep document's "executor".
type Executor struct {
	// Kind is where the runs run.
	Kind ExecutorKind `json:"kind"`
	// Address is the Ray dashboard's address (ray only).
	Address string `json:"address,omitempty"`
	// RayJobs are the submission ids of the sweep's Ray jobs (ray only).
	RayJobs []string `json:"ray_jobs,omitempty"`
}

// MarshalJSON writes the executor as the contract shows it: {"kind":
// "local"}, and for Ray always its "address" and "ray_jobs" ([] until the
// first Ray job is submitted: the document is saved before it), so that
// a reader finds the keys of its kind in every sweep.json.
func (e Executor) MarshalJSON() ([]byte, error) {
	type plain Executor // without this method: the omitempty fields as they are
	if e.Kind != ExecutorRay {
		return json.Marshal(plain(e))
	}
	jobs := e.RayJobs
	if jobs == nil {
		jobs = []string{}
	}
	return json.Marshal(struct {
		Kind    ExecutorKind `json:"kind"`
		Address string       `json:"address"`
		RayJobs []string     `json:"ray_jobs"`
	}{e.Kind, e.Address, jobs})
}

// RunFlags are the flags every run of a sweep gets besides its params and
// window: what a resumed sweep runs with again. (The sweep document's
// "run_flags".)
type RunFlags struct {
	// Data is the --data paths made absolute; empty for the bundled
	// sample.
	Data []string `json:"data"`
	// From and To are --from and --to as given; empty for open ends.
	From string `json:"from"`
	To   string `json:"to"`
	// Timeframe is --timeframe (which of freqtrade's timeframes a data
	// folder stands for); empty when not given.
	Timeframe string `json:"timeframe,omitempty"`
	// Cash, FeeBps, SlippageBps and AllowShort are the market's flags.
	Cash        float64 `json:"cash"`
	FeeBps      float64 `json:"fee_bps"`
	SlippageBps float64 `json:"slippage_bps"`
	AllowShort  bool    `json:"allow_short"`
	// Python is the interpreter the runs use (its path); Sandbox is
	// --sandbox.
	Python  string `json:"python"`
	Sandbox bool   `json:"sandbox"`
	// PythonVersion is the version stratbench found that interpreter to
	// be when the sweep started (its own probe, run before any code of
	// the strategy's: not what a run reports); empty in documents of
	// older versions and when the runs ran on a Ray cluster's workers.
	PythonVersion string `json:"python_version,omitempty"`
}

// Counts are the sweep's runs: planned, finished, and how they ended.
type Counts struct {
	// Total is the runs the sweep plans (Plan.Runs, less the test runs of
	// folds where no train run passed).
	Total int64 `json:"total"`
	// Done is the runs with a result, Passed and Failed how they ended.
	Done   int64 `json:"done"`
	Passed int64 `json:"passed"`
	Failed int64 `json:"failed"`
}

// InSample is how a fold's best combination did on its train window.
type InSample struct {
	// Metric is the objective's metric, Value the best run's value of it.
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
	// Return is its total_return.
	Return float64 `json:"return"`
}

// FoldResult is one fold of the document's "walk_forward".
type FoldResult struct {
	// Train and Test are the fold's windows, half-open.
	Train Window `json:"train"`
	Test  Window `json:"test"`
	// BestParams are the fold's best combination's params; nil (null)
	// while its train sweep runs and when no train run passed.
	BestParams Params `json:"best_params"`
	// InSample is nil (null) with BestParams.
	InSample *InSample `json:"in_sample"`
	// OutOfSample is the test run's metrics; nil (null) until it passed.
	OutOfSample json.RawMessage `json:"out_of_sample"`
	// JobID is the test run's job; nil (null) until it finished.
	JobID *string `json:"job_id"`
}

// Stitched are the out-of-sample metrics of a walk-forward: its test
// windows one after another, by compounding their returns in order.
type Stitched struct {
	// Folds is the number of test windows stitched: the folds whose test
	// run passed.
	Folds int `json:"folds"`
	// StartEquity is the first stitched test run's start_equity.
	StartEquity float64 `json:"start_equity"`
	// FinalEquity is StartEquity grown by TotalReturn.
	FinalEquity float64 `json:"final_equity"`
	// TotalReturn is Π(1 + total_return) − 1 over the stitched folds.
	TotalReturn float64 `json:"total_return"`
	// CAGR annualises TotalReturn over the stitched test windows' total
	// length (Julian years); 0 when undefined, −1 when all was lost.
	CAGR float64 `json:"cagr"`
	// Fills and Trades add up the stitched test runs'.
	Fills  int64 `json:"fills"`
	Trades int64 `json:"trades"`
}

// WalkForwardResult is the document's "walk_forward".
type WalkForwardResult struct {
	// Folds are the folds in order.
	Folds []FoldResult `json:"folds"`
	// OutOfSample is nil (null) until a test run passed.
	OutOfSample *Stitched `json:"out_of_sample"`
	// Efficiency is the mean over folds of (out-of-sample return per
	// year) / (in-sample return per year), each a simple return divided
	// by its window's length in years; nil (null) unless every fold has
	// both and every in-sample return is above 0.
	Efficiency *float64 `json:"efficiency"`
}

// Document is the sweep document: sweep.json, --output json and status
// SWEEP_ID --output json.
type Document struct {
	// SweepID names the sweep and its folder (Store.Create sets it).
	SweepID string
	// Status is StatusRunning until Finish.
	Status Status
	// Strategy and Data are what the sweep runs; a resume refuses either
	// changed.
	Strategy StrategyRef
	Data     DataRef
	// Spec is the sweep's spec (Spec.Doc, with Jobs set).
	Spec SpecDoc
	// Executor is where the runs run.
	Executor Executor
	// RunFlags are the runs' other flags (nil in a document written
	// before they were recorded: such a sweep cannot be resumed).
	RunFlags *RunFlags
	// Counts, Best, Runs and WalkForward are set by Tally.
	Counts Counts
	// Best is the best passed run (of the latest fold with one, in a
	// walk-forward); nil (null) when none passed.
	Best *Best
	// Runs are the results, ordered by Objective.Sort.
	Runs []Result
	// WalkForward is nil for a plain sweep, and then not in the JSON.
	WalkForward *WalkForwardResult
	// Robustness is set when the sweep finishes (robustness.go); when it
	// is nil, RobustnessReason says why ("" while the sweep runs).
	Robustness       *Robustness
	RobustnessReason string
	// StartedAt is when the sweep started (a resumed sweep keeps it).
	StartedAt time.Time
	// FinishedAt is nil (null) while the sweep runs; Finish sets it and
	// DurationMS, the time the sweep ran: from StartedAt, or, resumed
	// (Resume), the earlier sessions' DurationMS plus this one's.
	FinishedAt *time.Time
	DurationMS int64

	// resumedAt is when this session of a resumed sweep began (zero for
	// the first), and priorMS the time its earlier sessions ran.
	resumedAt time.Time
	priorMS   int64
}

// documentJSON is a Document in the order of the contract. Runs is
// omitted from the summary line.
type documentJSON struct {
	SweepID     string             `json:"sweep_id"`
	Status      Status             `json:"status"`
	Strategy    StrategyRef        `json:"strategy"`
	Data        DataRef            `json:"data"`
	Spec        SpecDoc            `json:"spec"`
	Executor    Executor           `json:"executor"`
	RunFlags    *RunFlags          `json:"run_flags,omitempty"`
	Counts      Counts             `json:"counts"`
	Best        *Best              `json:"best"`
	Robustness  *Robustness        `json:"robustness"`
	RobReason   *string            `json:"robustness_reason"`
	Runs        *[]Result          `json:"runs,omitempty"`
	WalkForward *WalkForwardResult `json:"walk_forward,omitempty"`
	StartedAt   time.Time          `json:"started_at"`
	FinishedAt  *time.Time         `json:"finished_at"`
	DurationMS  int64              `json:"duration_ms"`
}

func (d *Document) wire(withRuns bool) documentJSON {
	w := documentJSON{SweepID: d.SweepID, Status: d.Status, Strategy: d.Strategy, Data: d.Data, Spec: d.Spec,
		Executor: d.Executor, RunFlags: d.RunFlags, Counts: d.Counts, Best: d.Best, WalkForward: d.WalkForward,
		StartedAt: d.StartedAt, FinishedAt: d.FinishedAt, DurationMS: d.DurationMS, Robustness: d.Robustness}
	if d.RobustnessReason != "" {
		w.RobReason = &d.RobustnessReason
	}
	if withRuns {
		runs := d.Runs
		if runs == nil {
			runs = []Result{}
		}
		w.Runs = &runs
	}
	return w
}

// MarshalJSON writes the document with its runs.
func (d Document) MarshalJSON() ([]byte, error) { return json.Marshal(d.wire(true)) }

// UnmarshalJSON reads a document.
func (d *Document) UnmarshalJSON(data []byte) error {
	var w documentJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*d = Document{SweepID: w.SweepID, Status: w.Status, Strategy: w.Strategy, Data: w.Data, Spec: w.Spec,
		Executor: w.Executor, RunFlags: w.RunFlags, Counts: w.Counts, Best: w.Best, WalkForward: w.WalkForward,
		StartedAt: w.StartedAt, FinishedAt: w.FinishedAt, DurationMS: w.DurationMS, Robustness: w.Robustness}
	if w.RobReason != nil {
		d.RobustnessReason = *w.RobReason
	}
	if w.Runs != nil {
		d.Runs = *w.Runs
	}
	return nil
}

// Brief is the document without its runs, for listings: it marshals as
// the summary line's "sweep".
func (d *Document) Brief() json.Marshaler { return briefJSON{d} }

type briefJSON struct{ doc *Document }

func (b briefJSON) MarshalJSON() ([]byte, error) { return json.Marshal(b.doc.wire(false)) }

// SummaryLine is the last line of --output jsonl:
// {"type": "summary", "sweep": the document without its runs}.
type SummaryLine struct{ doc *Document }

// Summary returns the document's summary line.
func (d *Document) Summary() SummaryLine { return SummaryLine{d} }

// MarshalJSON writes the summary line.
func (s SummaryLine) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type  string       `json:"type"`
		Sweep documentJSON `json:"sweep"`
	}{"summary", s.doc.wire(false)})
}

// Tally sets the document's counts, best, runs and walk-forward from the
// results so far. plan is the sweep's plan and folds its walk-forward
// folds (nil for a plain sweep). A fold whose train runs all finished
// and none passed has no test run, and the total counts it so.
func (d *Document) Tally(plan *Plan, folds []Fold, results []Result) {
	d.tally(plan.Runs(len(folds)), plan.Len(), folds, results)
}

// Retally sets the document's counts, best, runs and walk-forward from
// results (what results.jsonl holds), without the plan: for a document
// saved while its sweep ran (sweep.json is rewritten at most every
// DefaultSaveEvery, so a sweep that crashed left it behind its
// results). Its folds are those the document names. A plain sweep's
// total stays as saved; a walk-forward's is made again from the plan's
// length (savedPlanLen), so that a fold whose train runs all failed since
// the save loses its test run as Tally would take it off.
func (d *Document) Retally(results []Result) {
	if d.WalkForward == nil {
		d.tally(d.Counts.Total, -1, nil, results)
		return
	}
	folds := make([]Fold, len(d.WalkForward.Folds))
	for k, f := range d.WalkForward.Folds {
		folds[k] = Fold{Index: k, Train: f.Train, Test: f.Test}
	}
	n := d.savedPlanLen(len(folds))
	if n < 0 {
		d.tally(d.Counts.Total, -1, folds, results)
		return
	}
	d.tally(int64(len(folds))*(n+1), n, folds, results)
}

// savedPlanLen returns the length of the plan (the combinations per fold)
// that the saved walk-forward document of nfolds folds was tallied with,
// or -1 when its counts fit none. Tally set its total to
// nfolds·(n+1) − k, k the folds then with all n train results and none
// ranked (no test run): k is one of at most two values, and n follows from
// it. Of two that fit, the larger n is the plan's: the smaller would need
// no fold to have had n results, which k = nfolds folds had.
func (d *Document) savedPlanLen(nfolds int) int64 {
	if nfolds == 0 {
		return -1
	}
	obj := Objective{Metric: d.Spec.Metric, Minimize: d.Spec.Minimize}
	byFold := make([][]Result, nfolds)
	for _, r := range d.Runs {
		if r.Fold != nil && *r.Fold >= 0 && *r.Fold < nfolds {
			byFold[*r.Fold] = append(byFold[*r.Fold], r)
		}
	}
	for k := int64(nfolds); k >= 0; k-- {
		total := d.Counts.Total + k
		if total%int64(nfolds) != 0 || total/int64(nfolds) < 2 {
			continue
		}
		n := total/int64(nfolds) - 1
		var without int64
		for f := range byFold {
			train := int64(0)
			for _, r := range byFold[f] {
				if r.Phase == PhaseTrain {
					train++
				}
			}
			if train == n && obj.bestOf(byFold[f], PhaseTrain) == nil {
				without++
			}
		}
		if without == k {
			return n
		}
	}
	return -1
}

// tally is Tally with the sweep's total and its plan's length (-1 when
// unknown: then the total is kept as given).
func (d *Document) tally(total, planLen int64, folds []Fold, results []Result) {
	obj := Objective{Metric: d.Spec.Metric, Minimize: d.Spec.Minimize}
	d.Counts = Counts{Total: total}
	for i := range results {
		d.Counts.Done++
		if results[i].Status == RunPassed {
			d.Counts.Passed++
		} else {
			d.Counts.Failed++
		}
	}
	d.Runs = append(d.Runs[:0:0], results...)
	obj.Sort(d.Runs)
	if folds == nil {
		d.Best = obj.Best(results)
		d.WalkForward = nil
		return
	}
	byFold := make([][]Result, len(folds))
	for _, r := range results {
		if r.Fold != nil && *r.Fold < len(folds) {
			byFold[*r.Fold] = append(byFold[*r.Fold], r)
		}
	}
	d.Best = nil
	for k := range folds {
		train := 0
		for _, r := range byFold[k] {
			if r.Phase == PhaseTrain {
				train++
			}
		}
		best := obj.bestOf(byFold[k], PhaseTrain)
		if best != nil {
			d.Best = &Best{Index: best.r.Index, Params: best.r.Params, Metric: obj.Metric, Value: best.value, JobID: best.r.JobID}
		} else if int64(train) == planLen {
			d.Counts.Total-- // no test run for this fold
		}
	}
	d.WalkForward = walkForwardResult(obj, folds, byFold)
}

// bestOf returns the best passed run of results in phase, or nil.
func (o Objective) bestOf(results []Result, phase Phase) *ranked {
	var best *ranked
	for i := range results {
		if results[i].Phase != phase {
			continue
		}
		c := o.rank(&results[i])
		if c.ok && (best == nil || o.before(c, *best)) {
			best = &c
		}
	}
	return best
}

// walkForwardResult builds the document's walk_forward from each fold's
// results.
func walkForwardResult(obj Objective, folds []Fold, byFold [][]Result) *WalkForwardResult {
	out := &WalkForwardResult{Folds: make([]FoldResult, len(folds))}
	var st Stitched
	var stitchedYears, ratioSum float64
	ratios := 0
	for k, f := range folds {
		fr := FoldResult{Train: f.Train, Test: f.Test}
		var isReturn, oosReturn float64
		haveIS, haveOOS := false, false
		if best := obj.bestOf(byFold[k], PhaseTrain); best != nil {
			fr.BestParams = best.r.Params
			isReturn, haveIS = metricValue(best.r.Metrics, "total_return")
			fr.InSample = &InSample{Metric: obj.Metric, Value: best.value, Return: isReturn}
		}
		for i := range byFold[k] {
			r := &byFold[k][i]
			if r.Phase != PhaseTest {
				continue
			}
			id := r.JobID
			fr.JobID = &id
			if r.Status != RunPassed {
				break
			}
			fr.OutOfSample = r.Metrics
			if oosReturn, haveOOS = metricValue(r.Metrics, "total_return"); haveOOS {
				if st.Folds == 0 {
					st.StartEquity, _ = metricValue(r.Metrics, "start_equity")
					st.TotalReturn = 0
				}
				st.Folds++
				st.TotalReturn = (1+st.TotalReturn)*(1+oosReturn) - 1
				stitchedYears += f.Test.Years()
				fills, _ := metricValue(r.Metrics, "fills")
				trades, _ := metricValue(r.Metrics, "trades")
				st.Fills += int64(fills)
				st.Trades += int64(trades)
			}
			break
		}
		if haveIS && haveOOS && isReturn > 0 {
			ratioSum += (oosReturn / f.Test.Years()) / (isReturn / f.Train.Years())
			ratios++
		}
		out.Folds[k] = fr
	}
	if st.Folds > 0 {
		st.FinalEquity = st.StartEquity * (1 + st.TotalReturn)
		switch growth := 1 + st.TotalReturn; {
		case growth <= 0:
			st.CAGR = -1
		case stitchedYears > 0:
			if g := math.Pow(growth, 1/stitchedYears) - 1; !math.IsInf(g, 0) && !math.IsNaN(g) {
				st.CAGR = g
			}
		}
		out.OutOfSample = &st
	}
	if ratios == len(folds) && ratios > 0 {
		e := ratioSum / float64(ratios)
		if !math.IsInf(e, 0) && !math.IsNaN(e) {
			out.Efficiency = &e
		}
	}
	return out
}

// Finish ends the document at time at: stopped when a signal stopped the
// sweep, else failed when a run failed, else passed.
func (d *Document) Finish(stopped bool, at time.Time) {
	switch {
	case stopped:
		d.Status = StatusStopped
	case d.Counts.Failed > 0:
		d.Status = StatusFailed
	default:
		d.Status = StatusPassed
	}
	at = at.UTC()
	d.FinishedAt = &at
	if d.resumedAt.IsZero() {
		d.DurationMS = at.Sub(d.StartedAt).Milliseconds()
	} else {
		d.DurationMS = d.priorMS + at.Sub(d.resumedAt).Milliseconds()
	}
}

// Resume marks the start, at time at, of a new session of a sweep loaded
// from its sweep.json: Finish then gives as DurationMS the time it ran in
// its earlier sessions (DurationMS as the last one saved it: a stopped
// session's end adds its own time, a crashed one's saves keep only the
// sessions before it, its own time not being known) plus this session's,
// not the time it lay stopped in between.
func (d *Document) Resume(at time.Time) {
	d.resumedAt, d.priorMS = at, d.DurationMS
}
