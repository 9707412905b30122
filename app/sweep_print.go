package app

import (
	"stratbench/job"
	"stratbench/present"
	"stratbench/sweep"
	"stratbench/sweep/local"
)

// ranAs is how o ran its sweep, for the command that resumes it
// (present.ResumeCommand); nil for nil (status, which does not know).
func ranAs(o *SweepOptions) *present.RanAs {
	if o == nil {
		return nil
	}
	return &present.RanAs{CI: o.CI, Output: o.Output, Ray: o.Executor == string(sweep.ExecutorRay), RayAddress: o.RayAddress, Jobs: o.Jobs}
}

// resumeHint says how to resume a stopped sweep with the command cmd, or
// that a resume would refuse it: its strategy has changed since (a save
// in the sweep view stops one so). status asks local.StrategyAsRun;
// prune never asks.
func resumeHint(doc *sweep.Document, cmd string) string {
	if readable, same := local.StrategyAsRun(doc); readable && !same {
		return "the strategy has changed since: a resume would refuse this sweep"
	}
	return "resume: " + cmd
}

// sweepSummary is doc's summary as text (present.SweepText); a stopped
// sweep's ends with how to resume it as o ran it (ranAs: nil for
// status).
func sweepSummary(doc *sweep.Document, o *SweepOptions) string {
	hint := ""
	if doc.Status == sweep.StatusStopped {
		hint = resumeHint(doc, present.ResumeCommand(doc.SweepID, ranAs(o)))
	}
	return present.SweepText(doc, 10, hint)
}

// newSweepPrinter prints doc's sweep as o asks (present.SweepPrinter): a
// failed run's line says why from its job's report.
func newSweepPrinter(o SweepOptions, doc *sweep.Document, total, prior int64) *present.SweepPrinter {
	out := present.SweepOutput{Format: o.Output, Stdout: o.Stdout, Stderr: o.Stderr, Progress: o.Progress,
		ResumeHint: func(doc *sweep.Document) string {
			return resumeHint(doc, present.ResumeCommand(doc.SweepID, ranAs(&o)))
		}}
	if home, err := job.DefaultHome(); err == nil {
		out.Report = job.ReadStore(home).Load
	}
	return present.NewSweepPrinter(out, doc, total, prior)
}
