package sweep

import (
	"fmt"
	"stratbench/internal/units"
)

// GapReason says what a fold lacks for the walk-forward efficiency.
type GapReason int

// The reasons a walk-forward has no efficiency.
const (
	// GapNoFolds: the walk-forward has no folds (yet).
	GapNoFolds GapReason = iota + 1
	// GapNoBest: no train run of the fold passed, so it has no best
	// combination, no in-sample return and no test run.
	GapNoBest
	// GapInSampleNotAbove0: the fold's in-sample return is 0 or below: a
	// ratio over a loss says nothing.
	GapInSampleNotAbove0
	// GapNoTest: the fold's test run has not passed (it failed, or has
	// not run).
	GapNoTest
)

// EfficiencyGap is why a walk-forward has no efficiency: the first fold
// that lacks what the ratio needs (WalkForwardResult.Efficiency).
type EfficiencyGap struct {
	Fold   int
	Reason GapReason
	// InSampleReturn is the fold's in-sample total return, with
	// GapInSampleNotAbove0.
	InSampleReturn float64
	// TestJobID is the fold's test run's job when it ran and did not
	// pass, with GapNoTest; "" when it has not run.
	TestJobID string
}

// EfficiencyGap returns why the walk-forward has no efficiency; ok is
// false when it has one. It reads the document as walkForwardResult made
// it: a fold with an in-sample result has a best combination, and one
// whose test run passed has out-of-sample metrics.
func (wf *WalkForwardResult) EfficiencyGap() (gap EfficiencyGap, ok bool) {
	if wf == nil || len(wf.Folds) == 0 {
		return EfficiencyGap{Reason: GapNoFolds}, true
	}
	if wf.Efficiency != nil {
		return EfficiencyGap{}, false
	}
	for k, f := range wf.Folds {
		switch {
		case f.InSample == nil:
			return EfficiencyGap{Fold: k, Reason: GapNoBest}, true
		case f.InSample.Return <= 0:
			return EfficiencyGap{Fold: k, Reason: GapInSampleNotAbove0, InSampleReturn: f.InSample.Return}, true
		case len(f.OutOfSample) == 0 || string(f.OutOfSample) == "null":
			g := EfficiencyGap{Fold: k, Reason: GapNoTest}
			if f.JobID != nil {
				g.TestJobID = *f.JobID
			}
			return g, true
		}
	}
	// Every fold has both: the ratio itself was not a number.
	return EfficiencyGap{Fold: -1}, true
}

// EfficiencyWhy says in words why the walk-forward's efficiency is empty,
// the first fold that lacks what it needs: "fold 1's in-sample return is
// -0.52 %, not above 0"; "" when it has one. done says whether the sweep
// has ended (a fold still running lacks what it will have). The sweep
// view, the text summary and the HTML report say it alike.
func (wf *WalkForwardResult) EfficiencyWhy(done bool) string {
	g, ok := wf.EfficiencyGap()
	if !ok {
		return ""
	}
	switch g.Reason {
	case GapNoFolds:
		return "no fold has run yet"
	case GapNoBest:
		if !done {
			return fmt.Sprintf("fold %d has no passed train run yet", g.Fold)
		}
		return fmt.Sprintf("no train run of fold %d passed, so it has no in-sample return and no test run", g.Fold)
	case GapInSampleNotAbove0:
		return fmt.Sprintf("fold %d's in-sample return is %s, not above 0", g.Fold, units.Percent(g.InSampleReturn))
	case GapNoTest:
		switch {
		case g.TestJobID != "":
			return fmt.Sprintf("fold %d's test run (job %s) did not pass", g.Fold, g.TestJobID)
		case !done:
			return fmt.Sprintf("fold %d's test run has not run yet", g.Fold)
		}
		return fmt.Sprintf("fold %d's test run did not run", g.Fold)
	}
	return "the ratio is not a number"
}
