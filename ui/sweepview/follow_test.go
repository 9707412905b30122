package sweepview

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"stratbench/sweep"
)

// TestFollowSweepSendsWhatTheSweepAppends: the view of a sweep that runs
// elsewhere gets each result as it is appended and each document as it
// is saved, then, once the sweep no longer holds its results, its last
// document, ended; a sweep that had ended gets its document, ended, at
// once.
func TestFollowSweepSendsWhatTheSweepAppends(t *testing.T) {
	store, err := sweep.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	spec, err := sweep.ParseSpec(sweep.Flags{Grid: []string{"fast=1,2,3"}}, map[string]any{"fast": int64(1)})
	if err != nil {
		t.Fatal(err)
	}
	doc := &sweep.Document{Status: sweep.StatusRunning, StartedAt: time.Now().UTC(), Spec: spec.Doc()}
	results, err := store.Create(doc)
	if err != nil {
		t.Fatal(err)
	}
	result := func(i int64) sweep.Result {
		return sweep.Result{Index: i, Params: sweep.Params{{Name: "fast", Value: i + 1}}, JobID: fmt.Sprintf("job-%d", i),
			Status: sweep.RunPassed, Metrics: json.RawMessage(`{"sharpe": 1}`), Fingerprint: "f", OrdersHash: "o"}
	}
	if err := results.Append(result(0)); err != nil {
		t.Fatal(err)
	}
	follower, first, prior, err := store.Follow(doc.SweepID)
	if err != nil || len(prior) != 1 {
		t.Fatalf("follow: %d prior results, %v", len(prior), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	updates := make(chan Update)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(updates)
		followSweep(ctx, store, follower, first, updates)
	}()
	if err := results.Append(result(1)); err != nil {
		t.Fatal(err)
	}
	if u := <-updates; u.Result == nil || u.Result.Index != 1 {
		t.Fatalf("first update %+v, want result #1", u)
	}
	saved := *first
	saved.Status, saved.Counts = sweep.StatusPassed, sweep.Counts{Total: 3, Done: 2, Passed: 2}
	if err := store.Save(&saved); err != nil {
		t.Fatal(err)
	}
	if u := <-updates; u.Doc == nil || u.Doc.Counts.Done != 2 || u.Ended {
		t.Fatalf("second update %+v, want the saved document", u)
	}
	if err := results.Close(); err != nil {
		t.Fatal(err)
	}
	if u := <-updates; u.Doc == nil || !u.Ended || u.Doc.Status != sweep.StatusPassed {
		t.Fatalf("last update %+v, want the last document, ended", u)
	}
	<-done
	if _, open := <-updates; open {
		t.Fatal("the updates go on after the end")
	}

	// The sweep has ended: its document, ended, at once.
	follower, first, _, err = store.Follow(doc.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	updates = make(chan Update, 4)
	followSweep(ctx, store, follower, first, updates)
	close(updates)
	if u := <-updates; u.Doc == nil || !u.Ended {
		t.Fatalf("an ended sweep's update %+v", u)
	}
}

// TestWatchedStart: the view of a recorded walk-forward starts with its
// folds (from its document), its total, its results and its plan.
func TestWatchedStart(t *testing.T) {
	rec := loadSweep(t, "walkforward")
	doc := rec.doc
	start, err := watchedStart(context.Background(), doc, rec.results)
	if err != nil {
		t.Fatal(err)
	}
	if len(start.Folds) != len(doc.WalkForward.Folds) || start.Folds[2].Test != doc.WalkForward.Folds[2].Test ||
		start.Total != doc.Counts.Total || len(start.Prior) != len(rec.results) || start.Planned == nil || start.Doc.Runs != nil {
		t.Fatalf("start: %d folds, total %d, %d prior, planned %v", len(start.Folds), start.Total, len(start.Prior), start.Planned != nil)
	}
	doc.WalkForward = nil
	if _, err := watchedStart(context.Background(), doc, nil); err == nil {
		t.Fatal("a walk-forward without its folds was shown as a plain sweep")
	}
}
