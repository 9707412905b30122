package sweepview

import (
	"context"
	"fmt"
	"sync"
	"time"

	"stratbench/sweep"
)

// followEvery is how often the view of a sweep that runs elsewhere looks
// at its folder for new results.
const followEvery = 250 * time.Millisecond

// Follow runs the view on sweep id of store, a sweep it does not run, with
// o (its Start and Updates are made here): what the sweep has now, then,
// while it runs elsewhere, what it appends, until it stops running or the
// view is left. The view only watches (o.Stop is nil).
func Follow(ctx context.Context, store *sweep.Store, id string, o Options) error {
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
	updates := make(chan Update)
	o.Updates = updates
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(updates)
		followSweep(ctx, store, follower, doc, updates)
	}()
	err = Run(ctx, o)
	cancel() // the follower stops: nobody reads its updates any more
	wg.Wait()
	return err
}

// watchedStart is what the view of a sweep it does not run is told as it
// starts: the document as read, its results so far, its folds, and its
// plan (from the spec it saved).
func watchedStart(ctx context.Context, doc *sweep.Document, results []sweep.Result) (Start, error) {
	spec, err := sweep.RestoreSpec(doc.Spec, nil)
	if err != nil {
		return Start{}, fmt.Errorf("sweep %s: %w", doc.SweepID, err)
	}
	plan, err := spec.Plan(ctx)
	if err != nil {
		return Start{}, fmt.Errorf("sweep %s: %w", doc.SweepID, err)
	}
	var folds []sweep.Fold
	if doc.Spec.WalkForward != nil {
		if doc.WalkForward == nil {
			return Start{}, fmt.Errorf("sweep %s has not saved its walk-forward's folds yet: try again in a moment", doc.SweepID)
		}
		for k, f := range doc.WalkForward.Folds {
			folds = append(folds, sweep.Fold{Index: k, Train: f.Train, Test: f.Test})
		}
	}
	first := *doc
	first.Runs = nil
	return Start{Doc: &first, Total: doc.Counts.Total, Folds: folds, Prior: results, Planned: sweep.Planned(spec, plan)}, nil
}

// followSweep sends the view what follower reads of a sweep until it no
// longer runs (its last document then, said ended) or ctx ends. A sweep
// that ended before the view opened ends at once.
func followSweep(ctx context.Context, store *sweep.Store, follower *sweep.Follower, doc *sweep.Document, updates chan<- Update) {
	push := func(u Update) bool {
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
		last.Status = store.Listed(&last) // a sweep that crashed is stopped
		push(Update{Doc: &last, Ended: true})
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
			push(Update{Notice: fmt.Sprintf("the sweep can no longer be followed: %v", err)})
			return
		}
		for i := range results {
			if !push(Update{Result: &results[i]}) {
				return
			}
		}
		if d != nil {
			doc = d
			shown := *d
			shown.Runs = nil
			if !push(Update{Doc: &shown}) {
				return
			}
		}
		if !running {
			final(doc)
			return
		}
	}
}
