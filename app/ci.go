package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"stratbench/contract"
	"stratbench/engine"
	"stratbench/internal/signals"
	"stratbench/internal/termtext"
	"stratbench/job"
	"stratbench/present"
	"stratbench/watch"
)

// CI runs the strategy headless: once, printing its report, or with Watch
// once per save until a signal (docs/commands.md). It returns nil when
// the run passed, exit 1 when it failed, and 128 + n when signal n stopped
// it.
func CI(ctx context.Context, o RunOptions) error {
	if err := checkOutput(o.Output, "text", "json"); err != nil {
		return err
	}
	if err := checkTheme(o.Theme); err != nil {
		return err
	}
	if o.Theme != "" {
		// As the workbench refuses --ci's flags: a headless run draws
		// nothing, and a theme it took silently would say it did.
		return usage(errors.New("--theme goes with the workbench (and the sweep view), not --ci: a headless run draws nothing"))
	}
	if o.Poll && !o.Watch {
		return usage(errors.New("--poll goes with the workbench or --ci --watch: a single --ci run watches nothing"))
	}
	if o.Report != "" && o.Watch {
		return usage(errors.New("--report writes the report of one run: it does not go with --watch (run stratbench report ID for a job of the watch)"))
	}
	if err := checkCIReport(o.Report); err != nil {
		return err
	}
	if o.Strategy == "" {
		// A CI script whose variable came out empty must not go green on
		// the bundled example: only the workbench falls back to it.
		return usage(missingCIStrategy("."))
	}
	strategy, _, err := resolveStrategy(o.Strategy, o.Suggest)
	if err != nil {
		return usage(err)
	}
	if _, err := os.Stat(strategy); err != nil && !o.Watch {
		return usage(noStrategyFile(strategy, err))
	}
	s, signals, err := openSession(ctx, o, strategy)
	if err != nil {
		return err
	}
	defer signals.Close()
	defer s.Close()
	o.Stdout, o.Stderr = signals.WatchOutput(o.Stdout), signals.WatchOutput(o.Stderr)
	if o.Watch {
		s.KeepWarm()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		w, err := watch.New(s.Strategy(), o.watchOptions())
		if err != nil {
			return usage(err)
		}
		go w.Run(ctx)
		runWatch(ctx, s.RefreshOn(ctx, w.Changes()), s.Strategy(), s.Start, o, signals)
		return signals.Exit()
	}
	rep, err := runOnce(ctx, s.Start, o.Streams, signals)
	if err == nil {
		// The report, and where the job's files went: its folder, its
		// artifacts and its records, with their sizes ("artifacts" and
		// "records" in JSON, as status prints them).
		arts, lerr := job.ListArtifacts(s.Store().JobDir(rep.JobID))
		if lerr != nil {
			fmt.Fprintln(o.Stderr, "stratbench: warning:", lerr)
		}
		recs, lerr := job.ListRecords(s.Store().JobDir(rep.JobID))
		if lerr != nil {
			fmt.Fprintln(o.Stderr, "stratbench: warning:", lerr)
		}
		err = present.WriteStatus(o.Stdout, rep, arts, recs, o.Output)
	} else if rep != nil {
		// The job ran but its folder could not be written in full: the
		// report is all that is left of it, and it is printed.
		present.WriteReport(o.Stdout, rep, o.Output)
	}
	if err != nil {
		return asExit(err)
	}
	if o.Report != "" {
		path, err := writeJobReport(ctx, s.Store(), rep.JobID, o.Report)
		if err != nil {
			// The run is done and its report printed: what failed is
			// writing its files, as a job not saved in full (exit 1),
			// not bad input (--report's path was checked before the run).
			return &ExitError{Code: ExitFailed, Err: fmt.Errorf("the HTML report: %w", err)}
		}
		fmt.Fprintln(o.Stderr, "report:", path)
	}
	if err := signals.Exit(); err != nil {
		return err // a signal, or a reader gone by the report
	}
	switch {
	case rep.Failure != nil && rep.Failure.Kind == contract.KindData:
		return &ExitError{Code: ExitUsage} // bad data met as it streamed: bad input
	case rep.Status != job.StatusPassed:
		return failed()
	}
	return nil
}

// startFunc starts one job on the strategy's current content.
type startFunc func(ctx context.Context) (*engine.Job, error)

// runOnce runs one job, shows its progress on s.Progress and returns its
// report, under the signal policy. The error is the job's: a
// *engine.UsageError when it could not run, or why its folder could not be
// written in full (the report is returned all the same).
func runOnce(ctx context.Context, start startFunc, s Streams, signals *signals.Policy) (*job.Report, error) {
	ctx, kill := context.WithCancel(ctx)
	defer kill()
	job, err := start(ctx)
	if err != nil {
		return nil, err
	}
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		present.FollowProgress(job.Events(), s.Progress)
	}()
	for waiting := true; waiting; {
		select {
		case <-job.Done():
			waiting = false
		case sg := <-signals.C():
			signals.Take(sg, job.Stop, kill)
		}
	}
	rep, err := job.Wait()
	<-followed
	return rep, err
}

// runWatch runs a job for every change of the strategy file, printing one
// report per run (one JSON line each with JSON output), until a signal or
// the end of changes. A change during a run stops it first (on_finish runs)
// and prints its report. A signal stops the run in flight the same way and
// ends the watch; a second kills that run at once.
func runWatch(ctx context.Context, changes <-chan watch.Change, strategy string, start startFunc, o RunOptions, signals *signals.Policy) {
	var (
		current *engine.Job
		kill    context.CancelFunc // kills current at once
		reports = make(chan *job.Report, 1)
	)
	// finish waits for the run in flight to end, after asking it to stop,
	// and prints its report. A first signal meanwhile lets it stop and
	// ends the watch after; a second one kills it.
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
				printWatchReport(o, rep)
				return
			case sg := <-signals.C():
				signals.Take(sg, func() {}, kill) // the run is stopping already
			}
		}
	}
	for {
		select {
		case sg := <-signals.C():
			// The first signal: the run in flight stops (a second,
			// meanwhile, kills it) and the watch ends.
			signals.Take(sg, func() {}, func() {})
			finish()
			return
		case rep := <-reports:
			kill()
			current = nil
			printWatchReport(o, rep)
		case ch, ok := <-changes:
			if !ok {
				finish()
				return
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
			if signals.Stopped() {
				return
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
				present.FollowProgress(events, nil)
				rep, err := job.Wait()
				if err != nil {
					fmt.Fprintln(o.Stderr, "stratbench:", err)
				}
				reports <- rep
			}()
		}
	}
}

// printWatchReport prints a watch-mode report: a JSON line, or the text and
// a blank line.
func printWatchReport(o RunOptions, rep *job.Report) {
	if rep == nil {
		return
	}
	if o.Output == "json" {
		present.WriteReportLine(o.Stdout, rep)
		return
	}
	io.WriteString(o.Stdout, termtext.Text(present.WatchLine(rep)))
}
