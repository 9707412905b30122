package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"stratbench/engine"
	"stratbench/internal/shortid"
	"stratbench/job"
	"stratbench/present"
)

// JobsOptions are the options of `stratbench jobs`.
type JobsOptions struct {
	Output   string // "text" or "json"
	Limit    int    // list at most this many jobs (the newest); 0 for all
	Status   string // only jobs of this status ("passed", "failed", "stopped", "running"); "" for all
	Strategy string // only jobs whose strategy file name contains this; "" for all
	Sweep    string // --sweep ID: only that sweep's runs
	All      bool   // --all: sweep runs too (hidden by default)
	Streams
}

// Jobs lists the jobs, newest first, filtered by status and strategy, at
// most Limit of them.
func Jobs(o JobsOptions) error {
	if err := checkOutput(o.Output, "text", "json"); err != nil {
		return err
	}
	if o.Limit < 0 {
		return usage(fmt.Errorf("--limit %d: want 0 (all) or more", o.Limit))
	}
	switch job.Status(o.Status) {
	case "", job.StatusPassed, job.StatusFailed, job.StatusStopped, job.StatusRunning:
	default:
		return usage(fmt.Errorf("--status %q: want passed, failed, stopped or running", o.Status))
	}
	store, err := openStore(o.Stderr)
	if err != nil {
		return err
	}
	all, bad, err := store.Checked()
	if err != nil {
		return err
	}
	for _, re := range bad {
		// On stderr, so that the JSON on stdout stays a list of reports.
		fmt.Fprintf(o.Stderr, "stratbench: jobs: left out %s: its job.json is not its report (%v)\n", store.JobDir(re.ID), re.Err)
	}
	f := job.Filter{Status: job.Status(o.Status), Strategy: o.Strategy, AllSweeps: o.All}
	if o.Sweep != "" {
		sweeps, err := openSweepStore()
		if err != nil {
			return err
		}
		if f.SweepID, err = resolved(shortid.InSweeps(sweeps, o.Sweep)); err != nil {
			return fmt.Errorf("jobs --sweep: %w", err)
		}
	}
	shown, hidden := f.Apply(all)
	more := len(shown)
	if o.Limit > 0 && len(shown) > o.Limit {
		shown = shown[:o.Limit]
	}
	more -= len(shown)
	swept := func() map[string][]string { return shortid.ExistingSweeps(store.Home()).Swept(job.SweepIDs(shown)) }
	if err := present.WriteJobs(o.Stdout, shown, o.Output, time.Local, swept, store.Load); err != nil {
		return err
	}
	if o.Output != "text" {
		return nil
	}
	return present.WriteJobsLeftOut(o.Stdout, more, hidden)
}

// StatusOptions are the options of `stratbench status`.
type StatusOptions struct {
	ID     string // the job
	Diff   string // a second job to compare with; "" for none
	Output string // "text" or "json"
	Streams
}

// Status prints one job's report or one sweep's summary (shortid.Status
// decides which), or what differs between two jobs.
func Status(o StatusOptions) error {
	if err := checkOutput(o.Output, "text", "json"); err != nil {
		return err
	}
	id, store, sweeps, isSweep, err := statusTarget(o.ID, o.Stderr)
	if err != nil {
		return err
	}
	if isSweep {
		return sweepStatus(o, sweeps, id)
	}
	rep, err := store.Load(id)
	if err != nil {
		return usage(err)
	}
	if o.Diff != "" {
		otherID, err := resolved(shortid.InJobs(store, o.Diff))
		if err != nil {
			return err
		}
		other, err := store.Load(otherID)
		if err != nil {
			return usage(err)
		}
		return present.WriteDiff(o.Stdout, rep, other, o.Output)
	}
	return present.WriteJobStatus(o.Stdout, rep, store.JobDir(id), o.Output, nil)
}

// LogsOptions are the options of `stratbench logs`.
type LogsOptions struct {
	ID     string // the job
	Follow bool   // keep printing while the job runs
	Output string // "text" or "jsonl"
	Streams
}

// Logs prints a job's log. Following ends with the job, or, like tail -f,
// with a signal: the command then exits with the signal's code.
func Logs(ctx context.Context, o LogsOptions) error {
	if err := checkOutput(o.Output, "text", "jsonl"); err != nil {
		return err
	}
	store, err := openStore(o.Stderr)
	if err != nil {
		return err
	}
	id, err := resolved(shortid.InJobs(store, o.ID))
	if err != nil {
		return err
	}
	signals := listenSignals()
	defer signals.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A signal ends the following.
	endSignals := signals.Serve(cancel, cancel)
	var follow job.Follow // nil: what is written so far
	if o.Follow {
		follow = engine.RunnerGone
	}
	err = store.Logs(ctx, id, follow, func(l job.LogLine) error {
		return present.WriteLogLine(o.Stdout, l, o.Output, time.Local)
	})
	endSignals() // the signal, if any, is taken
	if errors.Is(err, job.ErrUnknownJob) {
		return usage(err)
	}
	if err == nil {
		return signals.Exit()
	}
	return err
}

// Complete returns the ids that start with prefix, newest first, for
// shell completion: the jobs' when jobs, then the sweeps' when sweeps
// (shortid.Complete). It only reads: pressing TAB recovers no job, kills
// no process tree and writes no file.
func Complete(prefix string, jobs, sweeps bool) []string {
	home, err := job.DefaultHome()
	if err != nil {
		return nil
	}
	return shortid.Complete(home, prefix, jobs, sweeps)
}
