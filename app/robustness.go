package app

import (
	"fmt"

	"stratbench/internal/units"
	"stratbench/sweep"
)

// The robustness block of a sweep (docs/robustness.md): what the sweep
// computes it from when it finishes, and its line in the text summary.

// robustnessSource is what the sweep's runner computes the robustness
// block from: the bar times of the sweep's data, and its runs' equity
// records in the job store.
func (sr *sweepRun) robustnessSource() *sweep.RobustnessSource {
	if sr.sess == nil || sr.Data == nil {
		return nil // a test's sweep, without data
	}
	return &sweep.RobustnessSource{Bars: sr.Data.BarTimes, EquityPoints: sr.sess.store.EquityPoints}
}

// robustnessLine is the robustness block in the text summary: one line
// with the plain verdict, or why there is none ("" while the sweep runs,
// and for a document of a version without it).
func robustnessLine(doc *sweep.Document) string {
	rb := doc.Robustness
	if rb == nil {
		if doc.RobustnessReason == "" {
			return ""
		}
		return "robustness not computed: " + doc.RobustnessReason + "\n"
	}
	return fmt.Sprintf("robustness %s: deflated Sharpe %s, PBO %s (%s splits of %d blocks), best PSR %s, out-of-sample loss %s, %s\n",
		rb.Verdict, prob(rb.DeflatedSharpe), prob(rb.PBO), units.Count(rb.Combinations), rb.Blocks,
		prob(rb.BestPSR), prob(rb.OOSLossProbability), counted(rb.Trials, "trial", "trials"))
}

// prob writes a probability with two decimals, or three below 0.01 and
// above 0.99 (0.999 is not 1).
func prob(p float64) string {
	if p > 0 && p < 0.01 || p > 0.99 && p < 1 {
		return fmt.Sprintf("%.3f", p)
	}
	return fmt.Sprintf("%.2f", p)
}
