package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"

	"stratbench/job"
	"stratbench/sweep"
	"stratbench/ui/sweepview"
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

// TestSweepViewSaysWhyTheSweepStopped: an error that ends a sweep in the
// view (a run that could not start, a result that could not be saved)
// reaches the view as a notice after the stopped document, so the screen
// says why the sweep stopped rather than showing STOPPED alone.
func TestSweepViewSaysWhyTheSweepStopped(t *testing.T) {
	ctx := context.Background()
	cause := errors.New("#1 fast=3: start job: create job folder: no space left on device")
	sr := brokenSweep(t, cause)
	updates := newUpdateQueue()
	driven := make(chan error, 1)
	go func() {
		defer updates.close()
		driven <- driveSweeps(ctx, sr, nil, make(chan struct{}), updates, func(*sweepRun) {})
	}()
	var got []sweepview.Update
	for u := range updates.out {
		got = append(got, u)
	}
	if err := <-driven; !errors.Is(err, cause) {
		t.Fatalf("driveSweeps returned %v, want %v", err, cause)
	}
	var ended, told bool
	for _, u := range got {
		switch {
		case u.Ended:
			ended = true
			if u.Doc == nil || u.Doc.Status != sweep.StatusStopped {
				t.Errorf("the sweep ended with %+v, want its stopped document", u.Doc)
			}
		case u.Notice != "":
			told = ended && strings.Contains(u.Notice, "the sweep stopped: ") && strings.Contains(u.Notice, cause.Error())
		}
	}
	if !ended || !told {
		t.Fatalf("updates %+v: want the stopped document, then a notice naming %q", got, cause)
	}
}

// TestSweepViewTakesAChangedRunAsASave: a run that read the strategy after
// a save the watcher had not passed on yet ends the sweep with
// errStrategyChanged; in the view that is the save's stop, not an error:
// runUntilSave ends without one, and the save, when the watcher passes it
// on, starts the sweep again (driveSweeps waits for it).
func TestSweepViewTakesAChangedRunAsASave(t *testing.T) {
	changed := fmt.Errorf("#2 fast=4: %w (job 20261201-120000.000-abcd ran sha256 0123456789ab…)", errStrategyChanged)
	sr := brokenSweep(t, changed)
	updates := newUpdateQueue()
	defer updates.discard()
	saved, quit, err := runUntilSave(context.Background(), sr, nil, make(chan struct{}), updates)
	if saved != "" || quit || err != nil {
		t.Fatalf("runUntilSave = %q, %v, %v; want no save seen yet, no quit, no error", saved, quit, err)
	}
	if sr.doc.Status != sweep.StatusStopped {
		t.Fatalf("the sweep was saved as %s, want stopped (resumable)", sr.doc.Status)
	}
	// Outside the view the same error ends the sweep with its reason.
	if err := sameStrategy(&job.Report{JobID: "x", Strategy: job.StrategyInfo{SHA256: "b"}}, "a"); !errors.Is(err, errStrategyChanged) {
		t.Fatalf("sameStrategy of another content: %v", err)
	}
}

// brokenSweep is a sweep of three combinations, stored in a temporary
// home, whose executor reports one result and then fails with fail.
func brokenSweep(t *testing.T, fail error) *sweepRun {
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
	return &sweepRun{store: store, doc: doc, spec: spec, plan: plan, results: results, jobs: 1, executor: brokenExecutor{fail}}
}

// TestPlannedTellsThePlan: the view's Planned answers, for every
// combination of the grid, what the sweep's Plan runs (with a
// constraint, a sample and both), for params as the grid holds them and
// as a results line reads them back; at any size of grid.
func TestPlannedTellsThePlan(t *testing.T) {
	ctx := context.Background()
	ten, five := int64(10), int64(5)
	for _, f := range []sweep.Flags{
		{Grid: []string{"fast=2:5:1", "slow=10:40:10", "stop=0.5,1.5"}},
		{Grid: []string{"fast=2:5:1", "slow=10:40:10", "stop=0.5,1.5"}, Constraint: "fast * 10 <= slow"},
		{Grid: []string{"fast=2:5:1", "slow=10:40:10", "stop=0.5,1.5"}, Random: &ten, Seed: 7},
		{Grid: []string{"fast=2:5:1", "slow=10:40:10", "stop=0.5,1.5"}, Constraint: "fast * 10 <= slow", Random: &five},
	} {
		spec, err := sweep.ParseSpec(f, map[string]any{"fast": int64(0), "slow": int64(0), "stop": 0.0})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := spec.Plan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		in := map[int64]bool{}
		for c := range plan.All(context.Background()) {
			in[c.Index] = true
		}
		has := viewStart(&sweepRun{doc: &sweep.Document{}, spec: spec, plan: plan}).Planned
		if has == nil {
			t.Fatalf("%+v: the view is not told the plan of %d combinations", f, spec.Size())
		}
		for i := range spec.Size() {
			c := spec.At(i)
			line, err := json.Marshal(sweep.Result{Index: i, Params: c.Params, Status: sweep.RunPassed})
			if err != nil {
				t.Fatal(err)
			}
			var read sweep.Result
			if err := json.Unmarshal(line, &read); err != nil {
				t.Fatal(err)
			}
			if has(c.Params) != in[i] || has(read.Params) != in[i] {
				t.Errorf("%+v: #%d (%s): planned %v (read back %v), the plan runs it: %v", f, i, c.Params, has(c.Params), has(read.Params), in[i])
			}
		}
	}
	// A grid of 1.1 million combinations, sampled and constrained: the view
	// is told its plan too (no bitmap of the grid: Plan.Has).
	for _, f := range []sweep.Flags{
		{Grid: []string{"a=0:1100:1", "b=0:1000:1"}, Random: &five},
		{Grid: []string{"a=0:1100:1", "b=0:1000:1"}, Constraint: "a == 1100 && b % 250 == 0"},
	} {
		spec, err := sweep.ParseSpec(f, map[string]any{"a": int64(0), "b": int64(0)})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := spec.Plan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		has := planned(spec, plan)
		var in []int64
		for c := range plan.All(ctx) {
			in = append(in, c.Index)
			if !has(c.Params) {
				t.Errorf("%+v: #%d (%s) is planned, the view is told it is not", f, c.Index, c.Params)
			}
		}
		if len(in) != 5 {
			t.Fatalf("%+v: plan %v", f, in)
		}
		for _, i := range []int64{0, 1, in[0] + 1, spec.Size() - 2} {
			if c := spec.At(i); !slices.Contains(in, i) && has(c.Params) {
				t.Errorf("%+v: #%d (%s) is not planned, the view is told it is", f, i, c.Params)
			}
		}
	}
}
