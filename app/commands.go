package app

import (
	"context"
	"errors"
	"time"

	"stratbench/engine"
	"stratbench/sweep"
)

// JobsOptions are the options of `stratbench jobs`.
type JobsOptions struct {
	Output string // "text" or "json"
	Sweep  string // --sweep ID: only that sweep's runs
	All    bool   // --all: sweep runs too (hidden by default)
	Streams
}

// Jobs lists every job, newest first.
func Jobs(o JobsOptions) error {
	if err := checkOutput(o.Output, "text", "json"); err != nil {
		return err
	}
	store, err := openStore(o.Stderr)
	if err != nil {
		return err
	}
	reports, err := store.List()
	if err != nil {
		return err
	}
	if reports, err = sweepJobs(reports, o.Sweep, o.All); err != nil {
		return err
	}
	return writeJobs(o.Stdout, reports, o.Output, time.Local)
}

// StatusOptions are the options of `stratbench status`.
type StatusOptions struct {
	ID     string // the job
	Diff   string // a second job to compare with; "" for none
	Output string // "text" or "json"
	Streams
}

// Status prints one job's report, or what differs between two jobs.
func Status(o StatusOptions) error {
	if err := checkOutput(o.Output, "text", "json"); err != nil {
		return err
	}
	if o.Diff != "" && o.Output != "text" {
		return usage(errors.New("--diff prints text only"))
	}
	if sweep.IsID(o.ID) {
		return sweepStatus(o)
	}
	store, err := openStore(o.Stderr)
	if err != nil {
		return err
	}
	rep, err := store.Load(o.ID)
	if err != nil {
		return usage(err)
	}
	if o.Diff != "" {
		other, err := store.Load(o.Diff)
		if err != nil {
			return usage(err)
		}
		return writeDiff(o.Stdout, rep, other)
	}
	arts, err := engine.ListArtifacts(store.JobDir(rep.JobID))
	if err != nil {
		return err
	}
	return writeStatus(o.Stdout, rep, arts, o.Output)
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
	signals := listenSignals()
	defer signals.close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case sg := <-signals.C():
			signals.take(sg, cancel, cancel)
		case <-ctx.Done():
		}
	}()
	err = store.Logs(ctx, o.ID, o.Follow, func(l engine.LogLine) error {
		return writeLogLine(o.Stdout, l, o.Output, time.Local)
	})
	cancel()
	<-done // the signal, if any, is taken
	if errors.Is(err, engine.ErrUnknownJob) {
		return usage(err)
	}
	if err == nil {
		return signals.exit()
	}
	return err
}

// CompleteJobs returns the job ids that start with prefix, newest first,
// for shell completion. It only reads: pressing TAB recovers no job, kills
// no process tree and writes no file.
func CompleteJobs(prefix string) []string {
	home, err := engine.DefaultHome()
	if err != nil {
		return nil
	}
	return engine.ReadStore(home).Complete(prefix)
}
