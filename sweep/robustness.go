package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"stratbench/stats"
)

// Robustness is the sweep document's "robustness": how far to trust the
// best run of a plain sweep, by the published statistics of the stats
// package (docs/robustness.md says what each number means). It is
// computed once, when the sweep finishes, from the passed runs' equity
// records; the document's RobustnessReason says why it is nil.
type Robustness struct {
	// Trials is N, the passed runs: every one counts as a try.
	Trials int `json:"trials"`
	// Periods is T, the returns of each run: one per bar time of the
	// sweep's data (the union of its symbols' times) after the first.
	Periods int `json:"periods"`
	// BestIndex is the sweep's best run (by its objective), the one the
	// PSR and the deflated Sharpe ratio are of.
	BestIndex int64 `json:"best_index"`
	// BestSharpe is its Sharpe ratio per period (not annualised).
	BestSharpe float64 `json:"best_sharpe"`
	// BestPSR is its probabilistic Sharpe ratio against 0.
	BestPSR float64 `json:"best_psr"`
	// SharpeVariance is V, the variance of the N runs' per-period Sharpe
	// ratios, and ExpectedMaxSharpe SR*, the per-period Sharpe ratio the
	// best of N runs without skill would show.
	SharpeVariance    float64 `json:"sharpe_variance"`
	ExpectedMaxSharpe float64 `json:"expected_max_sharpe"`
	// DeflatedSharpe is the best run's PSR against ExpectedMaxSharpe.
	DeflatedSharpe float64 `json:"deflated_sharpe"`
	// PBO is the probability of backtest overfitting by CSCV over Blocks
	// blocks, in Combinations splits; OOSLossProbability the share of the
	// splits in which the run best in sample loses money out of sample.
	PBO                float64 `json:"pbo"`
	Blocks             int     `json:"blocks"`
	Combinations       int     `json:"combinations"`
	OOSLossProbability float64 `json:"oos_loss_probability"`
	// Lambdas are the splits' λ values.
	Lambdas Lambdas `json:"lambdas"`
	// Verdict is the plain reading of PBO and DeflatedSharpe
	// (stats.Judge): "likely real", "inconclusive" or "likely overfit".
	Verdict string `json:"verdict"`
}

// Lambdas are the λ values of CSCV's splits, as their distinct values in
// increasing order and how many splits gave each (λ = ln(ω/(1 − ω)) takes
// at most 2N − 1 values, one per mid-rank, so this is exact and small).
type Lambdas struct {
	Values []float64 `json:"values"`
	Counts []int     `json:"counts"`
}

// RobustnessSource is what the robustness block is computed from, beside
// the document's runs.
type RobustnessSource struct {
	// Bars returns the sweep's bar times: the distinct times (Unix
	// nanoseconds, increasing) of its data's bars within its window.
	Bars func(ctx context.Context) ([]int64, error)
	// EquityPoints streams a job's equity record: job.Store's.
	EquityPoints func(ctx context.Context, jobID string, fn func(t int64, equity float64) error) error
}

// MaxCSCVWork bounds the work of PBO, C(S, S/2)·S·N (a few seconds at
// 5·10⁸): S, 16 by default, goes down by 2 for a sweep of so many runs
// that 16 blocks would pass it (2,429 runs or more).
const MaxCSCVWork = 500_000_000

// CSCVBlocks is the number of blocks S that PBO cuts t returns of n runs
// into: stats.CSCVBlocks(t) (16, fewer for short data), less while
// C(S, S/2)·S·n passes MaxCSCVWork (down to 4); 0 when t is too short.
func CSCVBlocks(t, n int) int {
	s := stats.CSCVBlocks(t)
	for s > stats.MinBlocks && float64(binomial(s, s/2))*float64(s)*float64(n) > MaxCSCVWork {
		s -= 2
	}
	return s
}

func binomial(n, k int) int {
	r := 1
	for i := 1; i <= k; i++ {
		r = r * (n - k + i) / i
	}
	return r
}

// ComputeRobustness computes the robustness block of doc, a finished
// plain sweep, from its passed runs' equity records: each run's equity
// sampled at the bar times (carried forward from its last point; the
// start equity before its first), its per-period simple returns, their
// moments (kept for the best run; a Sharpe ratio for the others) and
// their per-block sums (stats.CSCV: the T × N matrix is never held).
// Memory is O(T) for the bar times and one run's returns, plus O(S) a run.
//
// It returns the block, or nil and why there is none: a walk-forward,
// fewer than two passed runs, too few returns, a record that cannot be
// read (naming the run and its job), returns whose statistics are not
// defined. The error is ctx's alone.
func ComputeRobustness(ctx context.Context, doc *Document, src RobustnessSource) (*Robustness, string, error) {
	if doc.WalkForward != nil {
		return nil, "a walk-forward: each fold's best is judged on its test window (walk_forward.efficiency); " +
			"these statistics are a plain sweep's", nil
	}
	var runs []*Result
	for i := range doc.Runs {
		if r := &doc.Runs[i]; r.Status == RunPassed && r.Fold == nil {
			runs = append(runs, r)
		}
	}
	slices.SortFunc(runs, func(a, b *Result) int { return int(a.Index - b.Index) })
	n := len(runs)
	if n < 2 || doc.Best == nil {
		return nil, fmt.Sprintf("%s passed: the statistics compare 2 passed runs at least", plural(n, "run")), nil
	}
	bars, err := src.Bars(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		return nil, "the data's bar times: " + err.Error(), nil
	}
	t := len(bars) - 1
	blocks := CSCVBlocks(t, n)
	if blocks == 0 {
		return nil, fmt.Sprintf("%s (one a bar after the first): PBO needs %d at least", plural(max(t, 0), "return"),
			stats.MinBlocks*stats.MinBlockRows), nil
	}
	cscv, err := stats.NewCSCV(t, blocks)
	if err != nil {
		return nil, "PBO: " + err.Error(), nil
	}
	sharpes := make([]float64, 0, n)
	var best stats.Moments
	equity := make([]float64, len(bars))
	for _, r := range runs {
		start, ok := metricValue(r.Metrics, "start_equity")
		if !ok && doc.RunFlags != nil {
			start = doc.RunFlags.Cash
		}
		if err := alignEquity(ctx, src, r.JobID, bars, start, equity); err != nil {
			if ctx.Err() != nil {
				return nil, "", ctx.Err()
			}
			return nil, fmt.Sprintf("run #%d (job %s): %v", r.Index, r.JobID, err), nil
		}
		rets, err := stats.Returns(equity)
		if err != nil {
			return nil, fmt.Sprintf("run #%d (job %s): its returns: %v", r.Index, r.JobID, err), nil
		}
		m, err := stats.ComputeMoments(rets)
		if err != nil && !errors.Is(err, stats.ErrZeroVariance) {
			return nil, fmt.Sprintf("run #%d (job %s): its returns: %v", r.Index, r.JobID, err), nil
		}
		sharpes = append(sharpes, m.Sharpe())
		if r.JobID == doc.Best.JobID {
			best = m
		}
		if err := cscv.Add(rets); err != nil {
			return nil, fmt.Sprintf("run #%d (job %s): PBO: %v", r.Index, r.JobID, err), nil
		}
	}
	if best.T == 0 {
		return nil, fmt.Sprintf("the best run #%d (job %s) is not among the passed runs", doc.Best.Index, doc.Best.JobID), nil
	}
	if best.Std == 0 {
		return nil, fmt.Sprintf("the best run #%d's returns do not vary (it never held a position): its Sharpe ratio says nothing", doc.Best.Index), nil
	}
	dsr, err := stats.DeflatedSharpe(best, sharpes)
	if err != nil {
		return nil, "the deflated Sharpe ratio: " + err.Error(), nil
	}
	psr, err := best.PSR(0)
	if err != nil {
		return nil, "the best run's PSR: " + err.Error(), nil
	}
	res, err := cscv.Result(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		return nil, "PBO: " + err.Error(), nil
	}
	rb := &Robustness{
		Trials: n, Periods: t, BestIndex: doc.Best.Index, BestSharpe: dsr.Sharpe, BestPSR: psr,
		SharpeVariance: dsr.Variance, ExpectedMaxSharpe: dsr.Threshold, DeflatedSharpe: dsr.DSR,
		PBO: res.PBO, Blocks: res.Blocks, Combinations: res.Combinations, OOSLossProbability: res.OOSLossProbability,
		Lambdas: lambdasOf(res.Lambdas()), Verdict: stats.Judge(res.PBO, dsr.DSR).String(),
	}
	if !finiteAll(rb.BestSharpe, rb.BestPSR, rb.SharpeVariance, rb.ExpectedMaxSharpe, rb.DeflatedSharpe) {
		return nil, "the runs' Sharpe ratios are not finite (a run whose returns do not vary and are not 0)", nil
	}
	return rb, "", nil
}

// alignEquity fills equity (one value per bar) with job id's equity at
// each bar time: the value of its last point at or before the bar (stats.
// Align's rule, streamed: the points are never held), start before its
// first point. Points after the last bar are ignored; points out of time
// order, or not finite, are an error.
func alignEquity(ctx context.Context, src RobustnessSource, id string, bars []int64, start float64, equity []float64) error {
	k, cur := 0, start
	last := int64(math.MinInt64)
	err := src.EquityPoints(ctx, id, func(t int64, v float64) error {
		if t < last {
			return errors.New("its equity record goes back in time")
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("its equity record holds %v", v)
		}
		last = t
		for k < len(bars) && bars[k] < t {
			equity[k] = cur
			k++
		}
		if k < len(bars) {
			cur = v
		}
		return nil
	})
	if err != nil {
		return err
	}
	for ; k < len(bars); k++ {
		equity[k] = cur
	}
	return nil
}

// lambdasOf groups λ values by value.
func lambdasOf(ls []float64) Lambdas {
	slices.Sort(ls)
	out := Lambdas{Values: []float64{}, Counts: []int{}}
	for i, l := range ls {
		if i > 0 && l == ls[i-1] {
			out.Counts[len(out.Counts)-1]++
			continue
		}
		out.Values = append(out.Values, l)
		out.Counts = append(out.Counts, 1)
	}
	return out
}

func finiteAll(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// The reasons the block is nil for a sweep that did not finish.
const (
	reasonStopped = "the sweep stopped before every run had its result: a resume that runs the rest computes it"
	reasonSignal  = "a signal stopped its computation"
)

// finishRobustness sets the document's robustness block as the sweep
// ends (see Runner.Robustness): nil with a reason when the sweep stopped
// (stopped), and when a stop (stop closed, or ctx ended) ends its
// computation.
func (r *Runner) finishRobustness(ctx context.Context, stop <-chan struct{}, stopped bool) {
	d := r.Doc
	d.Robustness, d.RobustnessReason = nil, ""
	switch {
	case r.Robustness == nil:
		return
	case stopped:
		d.RobustnessReason = reasonStopped
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	// The goroutine's owner is this call: it ends with ctx, cancelled on
	// return, and is waited for.
	go func() {
		defer close(done)
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	defer func() {
		cancel()
		<-done
	}()
	rb, why, err := ComputeRobustness(ctx, d, *r.Robustness)
	if err != nil {
		why = reasonSignal
	}
	d.Robustness, d.RobustnessReason = rb, why
}
