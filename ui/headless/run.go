package headless

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"stratbench/engine"
	"stratbench/watch"
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
// job's: a *engine.UsageError when it could not run, or why its folder could
// not be written in full (the report is printed and returned all the same).
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
		if rep != nil {
			// The job ran but its folder could not be written in full:
			// the report is all that is left of it.
			WriteReport(o.Stdout, rep, o.Output)
		}
		return rep, first, err
	}
	return rep, first, WriteReport(o.Stdout, rep, o.Output)
}

// Watch runs a job for every change of the strategy file, printing one
// report per run (one JSON line each with JSON output), until a signal or
// the end of changes. A change during a run stops it first (on_finish runs)
// and prints its report. A signal stops the run in flight the same way and
// ends Watch, which returns it; a second signal kills that run at once.
func Watch(ctx context.Context, changes <-chan watch.Change, strategy string, start Start, o Options) os.Signal {
	var (
		current *engine.Job
		kill    context.CancelFunc // kills current at once
		got     os.Signal          // the first signal
		reports = make(chan *engine.Report, 1)
	)
	// finish waits for the run in flight to end, after asking it to stop,
	// and prints its report. A first signal meanwhile lets it stop and
	// ends Watch after; a second one kills it.
	finish := func() {
		if current == nil {
			return
		}
		current.Stop()
		for {
			select {
			case rep := <-reports:
				kill()
				current = nil
				o.report(rep)
				return
			case sg := <-o.Signals:
				if got == nil {
					got = sg
				} else {
					kill()
				}
			}
		}
	}
	for {
		select {
		case sg := <-o.Signals:
			got = sg
			finish()
			return got
		case rep := <-reports:
			kill()
			current = nil
			o.report(rep)
		case ch, ok := <-changes:
			if !ok {
				finish()
				return got
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
			if got != nil {
				return got
			}
			jobCtx, cancel := context.WithCancel(ctx)
			job, err := start(jobCtx)
			if err != nil {
				cancel()
				fmt.Fprintln(o.Stderr, "stratbench:", err)
				continue
			}
			current, kill = job, cancel
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
