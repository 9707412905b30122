package local

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"

	"stratbench/job"
	"stratbench/sweep"
)

// brokenExecutor reports its first item's result, then fails as a run
// that could not start does.
type brokenExecutor struct{ err error }

func (b brokenExecutor) Execute(ctx context.Context, items iter.Seq[sweep.Item], stop <-chan struct{}, finished func(sweep.Item, sweep.Result) error) error {
	for it := range items {
		if err := finished(it, sweep.Result{Status: sweep.RunPassed}); err != nil {
			return err
		}
		break
	}
	return b.err
}

// update is what Drive told, in order.
type update struct {
	ended  *sweep.Document
	notice string
}

// events records what Drive tells in got.
func events(got *[]update) Events {
	return Events{
		Notice:  func(text string) { *got = append(*got, update{notice: text}) },
		Result:  func(sweep.Result) {},
		Saved:   func(sweep.Document) {},
		Ended:   func(d sweep.Document) { *got = append(*got, update{ended: &d}) },
		Restart: func(*Sweep) {},
	}
}

// TestSweepViewSaysWhyTheSweepStopped: an error that ends a sweep in the
// view (a run that could not start, a result that could not be saved)
// reaches the view as a notice after the stopped document, so the screen
// says why the sweep stopped rather than showing STOPPED alone.
func TestSweepViewSaysWhyTheSweepStopped(t *testing.T) {
	ctx := context.Background()
	cause := errors.New("#1 fast=3: start job: create job folder: no space left on device")
	sw := brokenSweep(t, cause)
	var got []update
	next := func(*Sweep) (*Sweep, error) { t.Fatal("a new sweep after an error"); return nil, nil }
	if err := Drive(ctx, sw, next, nil, make(chan struct{}), events(&got)); !errors.Is(err, cause) {
		t.Fatalf("Drive returned %v, want %v", err, cause)
	}
	var ended, told bool
	for _, u := range got {
		switch {
		case u.ended != nil:
			ended = true
			if u.ended.Status != sweep.StatusStopped {
				t.Errorf("the sweep ended with %+v, want its stopped document", u.ended)
			}
		case u.notice != "":
			told = ended && strings.Contains(u.notice, "the sweep stopped: ") && strings.Contains(u.notice, cause.Error())
		}
	}
	if !ended || !told {
		t.Fatalf("updates %+v: want the stopped document, then a notice naming %q", got, cause)
	}
}

// TestSweepViewTakesAChangedRunAsASave: a run that read the strategy after
// a save the watcher had not passed on yet ends the sweep with
// ErrStrategyChanged; in the view that is the save's stop, not an error:
// runUntilSave ends without one, and the save, when the watcher passes it
// on, starts the sweep again (Drive waits for it).
func TestSweepViewTakesAChangedRunAsASave(t *testing.T) {
	changed := fmt.Errorf("#2 fast=4: %w (job 20261201-120000.000-abcd ran sha256 0123456789ab…)", ErrStrategyChanged)
	sr := brokenSweep(t, changed)
	var got []update
	saved, quit, err := runUntilSave(context.Background(), sr, nil, make(chan struct{}), events(&got))
	if saved != "" || quit || err != nil {
		t.Fatalf("runUntilSave = %q, %v, %v; want no save seen yet, no quit, no error", saved, quit, err)
	}
	if sr.Doc.Status != sweep.StatusStopped {
		t.Fatalf("the sweep was saved as %s, want stopped (resumable)", sr.Doc.Status)
	}
	// Outside the view the same error ends the sweep with its reason.
	if _, err := ResultOf(&job.Report{JobID: "x", Strategy: job.StrategyInfo{SHA256: "b"}}, "a"); !errors.Is(err, ErrStrategyChanged) {
		t.Fatalf("ResultOf of another content: %v", err)
	}
}

// brokenSweep is a sweep of three combinations, stored in a temporary
// home, whose executor reports one result and then fails with fail.
func brokenSweep(t *testing.T, fail error) *Sweep {
	t.Helper()
	spec, err := sweep.ParseSpec(sweep.Flags{Grid: []string{"fast=2,3,4"}}, map[string]any{"fast": int64(5)})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := spec.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	store, err := sweep.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	doc := &sweep.Document{Status: sweep.StatusRunning, Spec: spec.Doc(), Executor: sweep.Executor{Kind: sweep.ExecutorLocal}}
	results, err := store.Create(doc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { results.Close() })
	return &Sweep{Store: store, Doc: doc, Spec: spec, Plan: plan, Results: results, Jobs: 1, Executor: brokenExecutor{fail}}
}
