package app

import (
	"context"
	"io"

	"stratbench/internal/signals"
	"stratbench/internal/termtext"
	"stratbench/session"
	"stratbench/sweep"
	"stratbench/sweep/local"
	"stratbench/ui/components"
	"stratbench/ui/sweepview"
	"stratbench/watch"
)

// runSweepView runs the sweep in the sweep view of the workbench. The
// view gets each result as it is appended and the document as it is
// saved; q (or the first signal) stops the sweep and quits once it has
// stopped, a second quits at once and kills the runs in flight. A save of
// the strategy stops the sweep (it is saved as stopped, resumable) and
// starts a new one with the same spec from the beginning. Leaving the
// view prints the last sweep's summary.
func runSweepView(ctx context.Context, o SweepOptions, sr *local.Sweep, s *session.Session, signals *signals.Policy) error {
	if signals.Stopped() {
		// The first signal came while the sweep was set up, after its
		// folder was made: no run starts, and no view opens.
		err := sr.Abandon(nil)
		io.WriteString(o.Stdout, termtext.Text(sweepSummary(sr.Doc, &o)))
		if err != nil {
			return err
		}
		return signals.Exit()
	}
	w, err := watch.New(s.Strategy(), watch.Options{Poll: o.Poll})
	if err != nil {
		sr.Results.Close()
		return usage(err)
	}
	last := sr
	drive := func(ctx context.Context, push func(sweepview.Update), stops <-chan struct{}) error {
		go w.Run(ctx)
		notice := func(text string) { push(sweepview.Update{Notice: text}) }
		next := func(prev *local.Sweep) (*local.Sweep, error) {
			return newSweep(ctx, SweepOptions{RunOptions: o.RunOptions}, s, prev.Data, prev.Jobs, local.ReadManifestNow,
				func(declared map[string]any) (*sweep.Spec, error) { return sweep.RestoreSpec(prev.Doc.Spec, declared) }, notice)
		}
		return local.Drive(ctx, sr, next, w.Changes(), stops, local.Events{
			Notice: notice,
			Result: func(r sweep.Result) { push(sweepview.Update{Result: &r}) },
			Saved:  func(d sweep.Document) { push(sweepview.Update{Doc: &d}) },
			Ended:  func(d sweep.Document) { push(sweepview.Update{Doc: &d, Ended: true}) },
			Restart: func(n *local.Sweep) {
				last = n
				start := viewStart(n)
				push(sweepview.Update{Restart: &start})
			}})
	}
	err = sweepview.RunDriven(ctx, sweepview.Options{
		Start:  viewStart(sr), // before the sweep runs: it copies the document
		Store:  s.Store(),
		Opener: components.Opener(),
		Report: func(ctx context.Context, id string) (string, error) {
			return writeSweepReport(ctx, sr.Store, s.Store(), id)
		},
		JobReport: func(ctx context.Context, id string) (string, error) {
			return writeJobReport(ctx, s.Store(), id, "")
		},
		Theme: o.Theme,
	}, signals.Serve, drive)
	io.WriteString(o.Stdout, termtext.Text(sweepSummary(last.Doc, &o)))
	switch {
	case err != nil && ctx.Err() == nil:
		return asSweepExit(err)
	case signals.Stopped():
		return signals.Exit()
	case last.Doc.Status == sweep.StatusStopped:
		// Quit (q, ctrl+c) before the sweep ended: stopped by the user,
		// as SIGINT stops one under --ci. Exit 0 says every run passed.
		return &ExitError{Code: ExitSIGINT}
	case last.Doc.Status == sweep.StatusFailed:
		return failed()
	}
	return nil
}

// viewStart is what the sweep view is told of sw as it starts.
func viewStart(sw *local.Sweep) sweepview.Start {
	// A copy: the runner tallies into sw.Doc while the view reads its own
	// (Tally replaces the parts it changes, so a shallow copy is enough).
	doc := *sw.Doc
	return sweepview.Start{Doc: &doc, Total: sw.Plan.Runs(len(sw.Folds)), Folds: sw.Folds, Prior: sw.Prior,
		Planned: sweep.Planned(sw.Spec, sw.Plan)}
}
