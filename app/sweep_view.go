package app

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"stratbench/internal/signals"
	"stratbench/internal/termtext"
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
func runSweepView(ctx context.Context, o SweepOptions, sr *sweepRun, signals *signals.Policy) error {
	ctx, kill := context.WithCancel(ctx)
	defer kill()
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
	interrupts := make(chan components.Interrupt, 2)
	endSignals := signals.Serve(func() { send(interrupts, components.InterruptStop) }, func() { send(interrupts, components.InterruptKill) })
	defer endSignals()
	w, err := watch.New(sr.sess.Strategy(), watch.Options{Poll: o.Poll})
	if err != nil {
		sr.Results.Close()
		return usage(err)
	}
	go w.Run(ctx)

	updates := sweepview.NewQueue()
	stops := make(chan struct{}, 1) // the view's stop requests
	requestStop := func() {
		select {
		case stops <- struct{}{}:
		default: // one is pending already
		}
	}
	driven := make(chan error, 1)
	last := sr
	start := viewStart(sr) // before the sweep runs: it copies the document
	go func() {
		defer updates.Close()
		err := driveSweeps(ctx, o.RunOptions, sr, w.Changes(), stops, updates, func(next *sweepRun) { last = next })
		driven <- err
	}()
	viewErr := sweepview.Run(ctx, sweepview.Options{
		Start:   start,
		Updates: updates.Out(),
		Stop:    requestStop,
		Store:   sr.sess.Store(),
		Opener:  opener(),
		Report: func(ctx context.Context, id string) (string, error) {
			return writeSweepReport(ctx, sr.Store, sr.sess.Store(), id)
		},
		JobReport: func(ctx context.Context, id string) (string, error) {
			return writeJobReport(ctx, sr.sess.Store(), id, "")
		},
		Theme:      o.Theme,
		Interrupts: interrupts,
	})
	endSignals()
	// The view is gone: a sweep still running was quit at once (q twice,
	// or a second signal): its runs are killed.
	requestStop()
	select {
	case err = <-driven:
	default:
		kill()
		err = <-driven
	}
	updates.Discard()
	if err == nil {
		err = viewErr
	}
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

// viewStart is what the sweep view is told of sr as it starts.
func viewStart(sr *sweepRun) sweepview.Start {
	// A copy: the runner tallies into sr.Doc while the view reads its own
	// (Tally replaces the parts it changes, so a shallow copy is enough).
	doc := *sr.Doc
	return sweepview.Start{Doc: &doc, Total: sr.Plan.Runs(len(sr.Folds)), Folds: sr.Folds, Prior: sr.Prior,
		Planned: sweep.Planned(sr.Spec, sr.Plan)}
}

// driveSweeps runs sr, and after each save of the strategy that changes
// it, stops the sweep in flight (saved as stopped) and runs a new one of
// the same spec. It returns when a stop request came and the sweep in
// flight has ended, or when ctx ends; current is told each new sweep.
func driveSweeps(ctx context.Context, ro RunOptions, sr *sweepRun, changes <-chan watch.Change, stops <-chan struct{},
	updates *sweepview.Queue, current func(*sweepRun)) error {
	for {
		saved, quit, err := runUntilSave(ctx, sr, changes, stops, updates)
		if err != nil && ctx.Err() == nil {
			// The sweep is saved as stopped: the view says why, not only
			// the summary printed after it.
			updates.Push(sweepview.Update{Notice: fmt.Sprintf("the sweep stopped: %v", err)})
		}
		if err != nil || quit || ctx.Err() != nil {
			return err
		}
		if saved == "" {
			// The sweep ended by itself: a save starts it again.
			var ok bool
			if saved, ok = waitForSave(ctx, changes, stops, sr.Doc.Strategy.SHA256); !ok {
				return nil
			}
		}
		prev := sr
		for {
			next, err := newSweep(ctx, SweepOptions{RunOptions: ro}, prev.sess, prev.Data, prev.Jobs, local.ReadManifestNow,
				func(declared map[string]any) (*sweep.Spec, error) { return sweep.RestoreSpec(prev.Doc.Spec, declared) },
				func(text string) { updates.Push(sweepview.Update{Notice: text}) })
			if err == nil {
				sr = next
				break
			}
			// The new content does not take the spec: say so, and wait
			// for the next save.
			updates.Push(sweepview.Update{Notice: fmt.Sprintf("the strategy changed but cannot be swept: %v", err)})
			var ok bool
			if saved, ok = waitForSave(ctx, changes, stops, saved); !ok {
				return nil
			}
		}
		current(sr)
		start := viewStart(sr)
		updates.Push(sweepview.Update{Restart: &start})
	}
}

// runUntilSave runs sr until it ends, a stop request comes (quit), or the
// strategy is saved with new content (saved is its hash; the sweep is
// stopped). It closes the sweep's results and sends its last document.
func runUntilSave(ctx context.Context, sr *sweepRun, changes <-chan watch.Change, stops <-chan struct{},
	updates *sweepview.Queue) (saved string, quit bool, err error) {
	defer sr.Results.Close()
	stop := make(chan struct{})
	var stopOnce sync.Once
	stopRun := func() { stopOnce.Do(func() { close(stop) }) }
	sr.Robustness = sr.robustnessSource()
	runner, done := sr.Runner()
	defer func() {
		if notices := done(); len(notices) > 0 {
			updates.Push(sweepview.Update{Notice: strings.Join(notices, " · ")})
		}
	}()
	runner.OnResult = func(r sweep.Result) { updates.Push(sweepview.Update{Result: &r}) }
	runner.OnSave = func(d sweep.Document) { updates.Push(sweepview.Update{Doc: &d}) }
	ran := make(chan error, 1)
	go func() { ran <- runner.Run(ctx, stop) }()
	for {
		select {
		case err = <-ran:
			final := *sr.Doc
			final.Runs = nil
			updates.Push(sweepview.Update{Doc: &final, Ended: true})
			if errors.Is(err, local.ErrStrategyChanged) && !quit {
				// A run started between a save and the watcher's word of
				// it (more likely on a busy machine) and read the saved
				// content: the sweep ended as the save would have ended
				// it, and the save, when the watcher passes it on, starts
				// the sweep again (saved is still empty when it has not).
				err = nil
			}
			return saved, quit, err
		case <-stops:
			quit = true
			stopRun()
		case ch, ok := <-changes:
			if !ok {
				changes = nil
				continue
			}
			if h := hex.EncodeToString(ch.Hash[:]); ch.Kind == watch.Changed && h != sr.Doc.Strategy.SHA256 && !quit {
				saved = h
				stopRun()
			}
		}
	}
}

// waitForSave waits for a save of the strategy whose content hash is not
// seen, and returns it; ok is false after a stop request or the end of ctx
// or of the changes.
func waitForSave(ctx context.Context, changes <-chan watch.Change, stops <-chan struct{}, seen string) (hash string, ok bool) {
	for {
		select {
		case <-stops:
			return "", false
		case <-ctx.Done():
			return "", false
		case ch, open := <-changes:
			if !open {
				return "", false
			}
			if h := hex.EncodeToString(ch.Hash[:]); ch.Kind == watch.Changed && h != seen {
				return h, true
			}
		}
	}
}
