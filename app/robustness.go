package app

import (
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
	return &sweep.RobustnessSource{Bars: sr.Data.BarTimes, EquityPoints: sr.sess.Store().EquityPoints}
}
