package app

import (
	"strconv"
	"strings"

	"stratbench/contract"
	"stratbench/job"
	"stratbench/present"
	"stratbench/sweep"
	"stratbench/sweep/local"
)

// resumeCommand is the command that resumes sweep id as o ran it: the
// plain command for nil (status, which does not know how the sweep ran);
// with --ci, and its --output, for a sweep that ran headless (a script
// that pastes it must not get the sweep view, nor another output); with
// the Ray flags given for a sweep that ran on Ray (a resume runs locally
// without them).
func resumeCommand(o *SweepOptions, id string) string {
	cmd := "stratbench sweep --resume " + id
	if o == nil {
		return cmd
	}
	if o.CI {
		cmd += " --ci"
		if o.Output != "text" {
			cmd += " --output " + o.Output
		}
	}
	if o.Executor == string(sweep.ExecutorRay) {
		cmd += " --executor ray"
		if o.RayAddress != "" {
			cmd += " --ray-address " + shellWord(o.RayAddress)
		}
		if o.Jobs > 0 {
			// On Ray a resume's default is the cluster's CPUs, not the
			// sweep's recorded --jobs.
			cmd += " --jobs " + strconv.Itoa(o.Jobs)
		}
	}
	return cmd
}

// shellWord quotes s for a POSIX shell unless it is one word as it is.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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
// sweep's ends with how to resume it as o ran it (resumeCommand: nil for
// status).
func sweepSummary(doc *sweep.Document, o *SweepOptions) string {
	hint := ""
	if doc.Status == sweep.StatusStopped {
		hint = resumeHint(doc, resumeCommand(o, doc.SweepID))
	}
	return present.SweepText(doc, 10, hint)
}

// newSweepPrinter prints doc's sweep as o asks (present.SweepPrinter): a
// failed run's line says why from its job's report.
func newSweepPrinter(o SweepOptions, doc *sweep.Document, total, prior int64) *present.SweepPrinter {
	var jobs *job.Store
	if home, err := job.DefaultHome(); err == nil {
		jobs = job.ReadStore(home)
	}
	return present.NewSweepPrinter(present.SweepOutput{
		Format: o.Output, Stdout: o.Stdout, Stderr: o.Stderr, Progress: o.Progress,
		Failure: func(id string) *contract.Failure {
			if jobs == nil {
				return nil
			}
			rep, err := jobs.Load(id)
			if err != nil {
				return nil
			}
			return rep.Failure
		},
		ResumeHint: func(doc *sweep.Document) string { return resumeHint(doc, resumeCommand(&o, doc.SweepID)) },
	}, doc, total, prior)
}
