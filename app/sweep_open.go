package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/charmbracelet/x/term"

	"stratbench/sweep"
	"stratbench/ui/components"
	"stratbench/ui/sweepview"
)

// SweepViewOptions are the options of `stratbench sweep view`.
type SweepViewOptions struct {
	ID    string // the sweep (an id or its prefix); "" chooses one from the list of sweeps
	Theme string // the view's theme
	Streams
}

// followEvery is how often the view of a sweep that runs elsewhere looks
// at its folder for new results.
const followEvery = 250 * time.Millisecond

// SweepView opens the sweep view on a sweep of the store, finished or
// not: a finished one as it ended, one that runs (in another stratbench)
// live, its results as they are appended. The view only watches: q
// quits and leaves a running sweep running. Without an id it lists the
// sweeps, newest first: enter opens one, esc in the view comes back to
// the list.
func SweepView(ctx context.Context, o SweepViewOptions) error {
	if err := checkTheme(o.Theme); err != nil {
		return err
	}
	store, err := openSweepStore()
	if err != nil {
		return err
	}
	id := ""
	if o.ID != "" {
		if id, err = store.Resolve(o.ID); err != nil {
			return asSweepExit(err)
		}
	}
	if out, ok := o.Stdout.(*os.File); !ok || !term.IsTerminal(out.Fd()) || !term.IsTerminal(os.Stdin.Fd()) {
		return usage(errors.New("the sweep view needs a terminal: `stratbench status SWEEP_ID` prints a sweep, `stratbench sweeps` lists them"))
	}
	jobs, err := openStore(o.Stderr)
	if err != nil {
		return err
	}
	signals := listenSignals()
	defer signals.close()
	interrupts := make(chan components.Interrupt, 2)
	defer signals.serve(func() { send(interrupts, components.InterruptStop) }, func() { send(interrupts, components.InterruptKill) })()
	view := func(id string, back bool) error {
		return viewSweep(ctx, store, id, sweepview.Options{Store: jobs, Theme: o.Theme, Opener: opener(), Interrupts: interrupts, Back: back})
	}
	if id != "" {
		if err := view(id, false); err != nil {
			return asSweepExit(err)
		}
		return signals.exit()
	}
	last := ""
	for {
		docs, _, err := store.List()
		if err != nil {
			return err
		}
		for _, d := range docs {
			d.Status = listedStatus(store, d)
		}
		id, err := sweepview.Pick(ctx, sweepview.PickOptions{Sweeps: docs, Selected: last, Theme: o.Theme, Interrupts: interrupts})
		if err != nil || id == "" || signals.stopped() {
			if err == nil {
				err = signals.exit()
			}
			return err
		}
		last = id
		switch err := view(id, true); {
		case errors.Is(err, sweepview.ErrBack):
		case err != nil:
			return asSweepExit(err)
		default:
			return signals.exit()
		}
	}
}

// viewSweep runs the sweep view on sweep id with o (its Start and Updates
// are made here): what the sweep has now, then, while it runs elsewhere,
// what it appends, until it stops running or the view is left.
func viewSweep(ctx context.Context, store *sweep.Store, id string, o sweepview.Options) error {
	follower, doc, results, err := store.Follow(id)
	if err != nil {
		return err
	}
	start, err := watchedStart(ctx, doc, results)
	if err != nil {
		return err
	}
	o.Start = start
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	updates := make(chan sweepview.Update)
	o.Updates = updates
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(updates)
		followSweep(ctx, store, follower, doc, updates)
	}()
	err = sweepview.Run(ctx, o)
	cancel() // the follower stops: nobody reads its updates any more
	wg.Wait()
	return err
}

// watchedStart is what the view of a sweep it does not run is told as it
// starts: the document as read, its results so far, its folds, and its
// plan (from the spec it saved).
func watchedStart(ctx context.Context, doc *sweep.Document, results []sweep.Result) (sweepview.Start, error) {
	spec, err := sweep.RestoreSpec(doc.Spec, nil)
	if err != nil {
		return sweepview.Start{}, fmt.Errorf("sweep %s: %w", doc.SweepID, err)
	}
	plan, err := spec.Plan(ctx)
	if err != nil {
		return sweepview.Start{}, fmt.Errorf("sweep %s: %w", doc.SweepID, err)
	}
	var folds []sweep.Fold
	if doc.Spec.WalkForward != nil {
		if doc.WalkForward == nil {
			return sweepview.Start{}, fmt.Errorf("sweep %s has not saved its walk-forward's folds yet: try again in a moment", doc.SweepID)
		}
		for k, f := range doc.WalkForward.Folds {
			folds = append(folds, sweep.Fold{Index: k, Train: f.Train, Test: f.Test})
		}
	}
	first := *doc
	first.Runs = nil
	return sweepview.Start{Doc: &first, Total: doc.Counts.Total, Folds: folds, Prior: results, Planned: planned(spec, plan)}, nil
}

// followSweep sends the view what follower reads of a sweep until it no
// longer runs (its last document then, said ended) or ctx ends. A sweep
// that ended before the view opened ends at once.
func followSweep(ctx context.Context, store *sweep.Store, follower *sweep.Follower, doc *sweep.Document, updates chan<- sweepview.Update) {
	push := func(u sweepview.Update) bool {
		select {
		case updates <- u:
			return true
		case <-ctx.Done():
			return false
		}
	}
	final := func(d *sweep.Document) {
		last := *d
		last.Runs = nil
		last.Status = listedStatus(store, &last) // a sweep that crashed is stopped
		push(sweepview.Update{Doc: &last, Ended: true})
	}
	if running, err := store.Running(doc.SweepID); err == nil && !running {
		final(doc)
		return
	}
	tick := time.NewTicker(followEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		results, d, running, err := follower.Poll()
		if err != nil {
			push(sweepview.Update{Notice: fmt.Sprintf("the sweep can no longer be followed: %v", err)})
			return
		}
		for i := range results {
			if !push(sweepview.Update{Result: &results[i]}) {
				return
			}
		}
		if d != nil {
			doc = d
			shown := *d
			shown.Runs = nil
			if !push(sweepview.Update{Doc: &shown}) {
				return
			}
		}
		if !running {
			final(doc)
			return
		}
	}
}
