package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"stratbench/contract"
	"stratbench/internal/signals"
	"stratbench/internal/termtext"
	"stratbench/job"
	"stratbench/present"
	"stratbench/session"
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
		return usage(session.NoStrategyFile(strategy, err))
	}
	// --watch runs the strategy again at every save, from a template
	// started while the data loads; one run starts cold (session.Config.Warm).
	s, signals, err := openSession(ctx, o, strategy, o.Watch)
	if err != nil {
		return err
	}
	defer signals.Close()
	defer s.Close()
	o.Stdout, o.Stderr = signals.WatchOutput(o.Stdout), signals.WatchOutput(o.Stderr)
	if o.Watch {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		changes, err := s.WatchStrategy(ctx, o.watchOptions())
		if err != nil {
			return usage(err)
		}
		s.Watch(ctx, changes, signals, session.WatchOutput{
			Waiting: func(name string) { fmt.Fprintf(o.Stderr, "waiting for %s\n", name) },
			Warning: func(err error) { fmt.Fprintln(o.Stderr, "stratbench: warning:", err) },
			Error:   func(err error) { fmt.Fprintln(o.Stderr, "stratbench:", err) },
			Report:  func(rep *job.Report) { printWatchReport(o, rep) },
			Follow:  func(events <-chan job.Event) { present.FollowProgress(events, nil) },
		})
		return signals.Exit()
	}
	rep, err := runOnce(ctx, s, o.Streams, signals)
	if err == nil {
		// The report, and where the job's files went: its folder, its
		// artifacts and its records, with their sizes ("artifacts" and
		// "records" in JSON, as status prints them).
		err = present.WriteJobStatus(o.Stdout, rep, s.Store().JobDir(rep.JobID), o.Output, func(err error) {
			fmt.Fprintln(o.Stderr, "stratbench: warning:", err)
		})
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

// runOnce runs one job of s (Session.RunOnce), its progress on
// streams.Progress.
func runOnce(ctx context.Context, s *session.Session, streams Streams, signals *signals.Policy) (*job.Report, error) {
	return s.RunOnce(ctx, signals, func(events <-chan job.Event) { present.FollowProgress(events, streams.Progress) })
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

// missingCIStrategy is the error of --ci without a STRATEGY: it names the
// .py files of dir, the current folder, that it could have been.
func missingCIStrategy(dir string) error {
	msg := "--ci runs the STRATEGY it is given, and none was: stratbench --ci STRATEGY.py"
	if files := session.PyFiles(dir); len(files) > 0 {
		shown := files[:min(len(files), 5)]
		msg = "--ci runs the STRATEGY it is given, and none was: stratbench --ci " + shown[0]
		msg += " (the .py files here: " + strings.Join(shown, ", ")
		if len(files) > len(shown) {
			msg += fmt.Sprintf(" and %d more", len(files)-len(shown))
		}
		msg += ")"
	}
	return errors.New(msg + "; only the workbench, without --ci, falls back to the bundled example")
}
