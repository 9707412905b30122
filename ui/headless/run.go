package headless

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"stratbench/engine"
	"stratbench/ui/watch"
)

// Options configure a headless run.
type Options struct {
	Output   string    // report format: "text" or "json"
	Stdout   io.Writer // reports
	Stderr   io.Writer // notices
	Progress io.Writer // the progress line; nil unless stderr is a terminal
	// Signals are stop requests (SIGINT, SIGTERM): the first stops the run
	// in flight (on_finish runs), a second kills it at once.
	Signals <-chan os.Signal
}

// Start starts one job on the strategy's current content.
type Start func(ctx context.Context) (*engine.Job, error)

// Once runs one job, shows its progress, prints its report and returns it
// with the first signal received (nil when none came). The error is the
// job's: a *engine.UsageError when it could not run.
func Once(ctx context.Context, start Start, o Options) (*engine.Report, os.Signal, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	job, err := start(ctx)
	if err != nil {
		return nil, nil, err
	}
	events := job.Events()
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		Follow(events, o.Progress)
	}()
	var first os.Signal
	for waiting := true; waiting; {
		select {
		case <-job.Done():
			waiting = false
		case sg := <-o.Signals:
			if first == nil {
				first = sg
				job.Stop()
			} else {
				cancel()
			}
		}
	}
	rep, err := job.Wait()
	<-followed
	if err != nil {
		return nil, first, err
	}
	return rep, first, WriteReport(o.Stdout, rep, o.Output)
}

// Watch runs a job for every change of the strategy file, printing one
// report per run (one JSON line each with JSON output), until a signal or
// the end of changes. A change during a run stops it first (on_finish runs)
// and prints its report. It returns the signal that ended it.
func Watch(ctx context.Context, changes <-chan watch.Change, strategy string, start Start, o Options) os.Signal {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var current *engine.Job
	reports := make(chan *engine.Report, 1)
	// finish stops the run in flight and prints its report; a signal while
	// it stops kills it at once.
	finish := func() {
		if current == nil {
			return
		}
		current.Stop()
		var rep *engine.Report
		select {
		case rep = <-reports:
		case <-o.Signals:
			cancel()
			rep = <-reports
		}
		current = nil
		o.report(rep)
	}
	for {
		select {
		case sg := <-o.Signals:
			finish()
			return sg
		case rep := <-reports:
			current = nil
			o.report(rep)
		case ch, ok := <-changes:
			if !ok {
				finish()
				return nil
			}
			switch ch.Kind {
			case watch.Missing:
				fmt.Fprintf(o.Stderr, "waiting for %s\n", filepath.Base(strategy))
				continue
			case watch.Warning:
				fmt.Fprintln(o.Stderr, "stratbench: warning:", ch.Err)
				continue
			}
			finish()
			job, err := start(ctx)
			if err != nil {
				fmt.Fprintln(o.Stderr, "stratbench:", err)
				continue
			}
			current = job
			events := job.Events()
			go func() {
				Follow(events, nil)
				rep, err := job.Wait()
				if err != nil {
					fmt.Fprintln(o.Stderr, "stratbench:", err)
				}
				reports <- rep
			}()
		}
	}
}

// report prints a watch-mode report: a JSON line, or the text and a blank line.
func (o Options) report(rep *engine.Report) {
	if rep == nil {
		return
	}
	if o.Output == "json" {
		WriteReportLine(o.Stdout, rep)
		return
	}
	WriteReport(o.Stdout, rep, "text")
	fmt.Fprintln(o.Stdout)
}
