package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"testing"
	"time"
)

// The pool's scheduling and the runner's bookkeeping, with runs that a
// test controls: the real runs (engine jobs) are tested through the binary
// (e2e/sweep_test.go).

// testStarter starts testRuns: each ends when the test releases it (its
// result), or when stopped (ErrRunStopped).
type testStarter struct {
	mu       sync.Mutex
	inFlight int
	maxSeen  int
	started  []Item
	runs     chan *testRun // every started run, in start order
	failAt   int64         // Start fails for this index; -1 for none
	autoEnd  bool          // runs end at once, passed
	metric   func(Item) float64
}

type testRun struct {
	s       *testStarter
	it      Item
	release chan Result
	stopped chan struct{}
	once    sync.Once
}

func newTestStarter(buffer int) *testStarter {
	return &testStarter{runs: make(chan *testRun, buffer), failAt: -1}
}

func (s *testStarter) Start(ctx context.Context, it Item) (Started, error) {
	if it.Combination.Index == s.failAt {
		return nil, errors.New("no room for a job folder")
	}
	s.mu.Lock()
	s.inFlight++
	s.maxSeen = max(s.maxSeen, s.inFlight)
	s.started = append(s.started, it)
	s.mu.Unlock()
	r := &testRun{s: s, it: it, release: make(chan Result, 1), stopped: make(chan struct{})}
	if s.autoEnd {
		v := 0.0
		if s.metric != nil {
			v = s.metric(it)
		}
		r.release <- Result{JobID: fmt.Sprint("job-", it), Status: RunPassed,
			Metrics: json.RawMessage(fmt.Sprintf(`{"sharpe": %v, "total_return": %v}`, v, v))}
	}
	s.runs <- r
	return r, nil
}

func (r *testRun) Stop() { r.once.Do(func() { close(r.stopped) }) }

func (r *testRun) Wait() (Result, error) {
	defer func() {
		r.s.mu.Lock()
		r.s.inFlight--
		r.s.mu.Unlock()
	}()
	select {
	case res := <-r.release:
		return res, nil
	case <-r.stopped:
		return Result{}, ErrRunStopped
	}
}

func items(n int) func(func(Item) bool) {
	return func(yield func(Item) bool) {
		for i := range n {
			if !yield(Item{Combination: Combination{Index: int64(i)}}) {
				return
			}
		}
	}
}

func TestPoolRunsAtMostSlotsAndReportsOneAtATime(t *testing.T) {
	s := newTestStarter(10)
	pool := &Pool{Slots: 3, Starter: s}
	var mu sync.Mutex
	reporting := 0
	var got []int64
	done := make(chan error, 1)
	go func() {
		done <- pool.Execute(context.Background(), items(10), make(chan struct{}), func(it Item, r Result) error {
			mu.Lock()
			reporting++
			if reporting > 1 {
				t.Error("finished called concurrently")
			}
			got = append(got, it.Combination.Index)
			mu.Unlock()
			time.Sleep(time.Millisecond)
			mu.Lock()
			reporting--
			mu.Unlock()
			return nil
		})
	}()
	// The first three start with none released (three slots); each
	// release then frees a slot for the next.
	var held []*testRun
	for range 3 {
		held = append(held, <-s.runs)
	}
	for i := range 10 {
		held[0].release <- Result{Status: RunPassed, JobID: "j"}
		held = held[1:]
		if i < 7 {
			held = append(held, <-s.runs)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Fatalf("reported %v", got)
	}
	if s.maxSeen != 3 {
		t.Fatalf("%d runs in flight at most, want 3", s.maxSeen)
	}
}

func TestPoolStopStopsRunsInFlightAndStartsNoMore(t *testing.T) {
	s := newTestStarter(10)
	pool := &Pool{Slots: 2, Starter: s}
	stop := make(chan struct{})
	done := make(chan error, 1)
	reported := 0
	go func() {
		done <- pool.Execute(context.Background(), items(5), stop, func(Item, Result) error { reported++; return nil })
	}()
	first, second := <-s.runs, <-s.runs
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, r := range []*testRun{first, second} {
		select {
		case <-r.stopped:
		default:
			t.Fatalf("run %s was not stopped", r.it)
		}
	}
	if reported != 0 || len(s.started) != 2 {
		t.Fatalf("%d reported, %d started after the stop; want 0 and 2", reported, len(s.started))
	}
}

func TestPoolStartErrorEndsTheExecution(t *testing.T) {
	s := newTestStarter(10)
	s.failAt = 1
	pool := &Pool{Slots: 1, Starter: s}
	done := make(chan error, 1)
	go func() {
		done <- pool.Execute(context.Background(), items(5), make(chan struct{}), func(Item, Result) error { return nil })
	}()
	(<-s.runs).release <- Result{Status: RunPassed, JobID: "j"}
	err := <-done
	if err == nil || err.Error() != "index 1: no room for a job folder" {
		t.Fatalf("error %v", err)
	}
	if len(s.started) != 1 {
		t.Fatalf("%d started, want 1", len(s.started))
	}
}

func TestPoolFinishedErrorStopsTheOthers(t *testing.T) {
	s := newTestStarter(10)
	pool := &Pool{Slots: 2, Starter: s}
	done := make(chan error, 1)
	full := errors.New("disk full")
	go func() {
		done <- pool.Execute(context.Background(), items(5), make(chan struct{}), func(Item, Result) error { return full })
	}()
	first, second := <-s.runs, <-s.runs
	first.release <- Result{Status: RunPassed, JobID: "j"}
	if err := <-done; !errors.Is(err, full) {
		t.Fatalf("error %v, want %v", err, full)
	}
	select {
	case <-second.stopped:
	default:
		t.Fatal("the run in flight was not stopped")
	}
}

// newTestRunner makes a sweep folder for spec in a temporary home.
func newTestRunner(t *testing.T, spec *Spec, folds []Fold, s *testStarter, slots int) (*Runner, *Store) {
	t.Helper()
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	plan, err := spec.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	doc := &Document{Status: StatusRunning, Spec: spec.Doc(), Executor: Executor{Kind: ExecutorLocal}}
	results, err := store.Create(doc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { results.Close() })
	return &Runner{Store: store, Doc: doc, Spec: spec, Plan: plan, Folds: folds, Results: results,
		Executor: &Pool{Slots: slots, Starter: s}}, store
}

func TestRunnerResumesWhatHasNoResult(t *testing.T) {
	spec, err := ParseSpec(Flags{Grid: []string{"a=1:4:1"}}, map[string]any{"a": int64(0)})
	if err != nil {
		t.Fatal(err)
	}
	s := newTestStarter(10)
	s.autoEnd = true
	r, store := newTestRunner(t, spec, nil, s, 2)
	// A first run stopped after indices 1 and 3.
	for _, i := range []int64{1, 3} {
		if err := r.Results.Append(Result{Index: i, Params: spec.At(i).Params, JobID: "old", Status: RunPassed}); err != nil {
			t.Fatal(err)
		}
	}
	r.Results.Close()
	results, rb, err := store.OpenResults(r.Doc.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	defer results.Close()
	r.Results, r.Prior = results, rb.Results
	var streamed []int64
	r.OnResult = func(res Result) { streamed = append(streamed, res.Index) }
	// The first session ran 5 s: while the second runs, its document keeps
	// them (a crash then loses only its own time), and its end adds them.
	r.Doc.DurationMS = 5000
	r.Doc.Resume(time.Now())
	var whileRunning []int64
	r.OnSave = func(d Document) {
		if d.Status == StatusRunning {
			whileRunning = append(whileRunning, d.DurationMS)
		}
	}
	if err := r.Run(context.Background(), make(chan struct{})); err != nil {
		t.Fatal(err)
	}
	if len(whileRunning) == 0 || slices.ContainsFunc(whileRunning, func(ms int64) bool { return ms != 5000 }) || r.Doc.DurationMS < 5000 {
		t.Fatalf("duration_ms %v while it ran, %d at its end; want the first session's 5000, then more", whileRunning, r.Doc.DurationMS)
	}
	var started []int64
	for _, it := range s.started {
		started = append(started, it.Combination.Index)
	}
	slices.Sort(started)
	slices.Sort(streamed)
	if !slices.Equal(started, []int64{0, 2}) || !slices.Equal(streamed, []int64{0, 2}) {
		t.Fatalf("started %v, streamed %v; want 0 and 2", started, streamed)
	}
	saved, err := store.Load(r.Doc.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Status != StatusPassed || saved.Counts != (Counts{Total: 4, Done: 4, Passed: 4}) || saved.FinishedAt == nil {
		t.Fatalf("saved: %s %+v", saved.Status, saved.Counts)
	}
}

func TestRunnerStoppedIsResumable(t *testing.T) {
	spec, err := ParseSpec(Flags{Grid: []string{"a=1:4:1"}}, map[string]any{"a": int64(0)})
	if err != nil {
		t.Fatal(err)
	}
	s := newTestStarter(10)
	r, store := newTestRunner(t, spec, nil, s, 2)
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background(), stop) }()
	(<-s.runs).release <- Result{Status: RunPassed, JobID: "j"}
	<-s.runs
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	saved, _ := store.Load(r.Doc.SweepID)
	if saved.Status != StatusStopped || saved.Counts.Done >= 4 {
		t.Fatalf("saved: %s %+v", saved.Status, saved.Counts)
	}
}

// TestRunnerWalkForwardTestsEachFoldsBest: the test phase runs each fold's
// best train combination on the fold's test window.
func TestRunnerWalkForwardTestsEachFoldsBest(t *testing.T) {
	spec, err := ParseSpec(Flags{Grid: []string{"a=1:3:1"}, WalkForward: "train=2d,test=1d", Metric: "total_return"},
		map[string]any{"a": int64(0)})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	folds, err := spec.WalkForward().Folds(Bars{First: start, Last: start.Add(7*Day - time.Minute), Interval: time.Minute}, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	s := newTestStarter(64)
	s.autoEnd = true
	// Fold k's best is a = (k mod 3) + 1.
	s.metric = func(it Item) float64 {
		if it.Phase == PhaseTest {
			return 0.01
		}
		if it.Combination.Params[0].Value == int64(*it.Fold%3+1) {
			return 0.02
		}
		return 0.001
	}
	r, _ := newTestRunner(t, spec, folds, s, 2)
	if err := r.Run(context.Background(), make(chan struct{})); err != nil {
		t.Fatal(err)
	}
	tests := 0
	for _, it := range s.started {
		if it.Phase != PhaseTest {
			if *it.Window != folds[*it.Fold].Train {
				t.Fatalf("train run %s on %s", it, it.Window)
			}
			continue
		}
		tests++
		if want := int64(*it.Fold%3 + 1); it.Combination.Params[0].Value != want || *it.Window != folds[*it.Fold].Test {
			t.Fatalf("test run %s: %s on %s, want a=%d on %s", it, it.Combination.Params, it.Window, want, folds[*it.Fold].Test)
		}
	}
	if tests != 5 || len(s.started) != 20 || r.Doc.Counts != (Counts{Total: 20, Done: 20, Passed: 20}) {
		t.Fatalf("%d tests, %d runs, counts %+v", tests, len(s.started), r.Doc.Counts)
	}
	if wf := r.Doc.WalkForward; wf == nil || wf.OutOfSample == nil || wf.OutOfSample.Folds != 5 {
		t.Fatalf("walk-forward %+v", r.Doc.WalkForward)
	}
}

// drawingExecutor draws every item and runs none; it closes stop after the
// first, as a user's stop might come while the next is being drawn.
type drawingExecutor struct {
	stop  func()
	drawn []int64
}

func (e *drawingExecutor) Execute(_ context.Context, items iter.Seq[Item], _ <-chan struct{}, _ func(Item, Result) error) error {
	for it := range items {
		e.drawn = append(e.drawn, it.Combination.Index)
		e.stop()
	}
	return nil
}

// TestRunnerStopEndsTheDrawing: a stop ends the drawing of items: the
// plan does not look on through the combinations its constraint drops for
// the next one (a million here; with 10^9 that took minutes after the
// stop before the sweep could end).
func TestRunnerStopEndsTheDrawing(t *testing.T) {
	spec, err := ParseSpec(Flags{Grid: []string{"fast=1:1000:1", "slow=1:1000:1"}, Constraint: "fast == 1 && slow == 1 || fast == 1000 && slow == 1000"},
		map[string]any{"fast": int64(0), "slow": int64(0)})
	if err != nil {
		t.Fatal(err)
	}
	r, store := newTestRunner(t, spec, nil, newTestStarter(1), 1)
	stop := make(chan struct{})
	ex := &drawingExecutor{stop: sync.OnceFunc(func() { close(stop) })}
	r.Executor = ex
	if err := r.Run(context.Background(), stop); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ex.drawn, []int64{0}) {
		t.Fatalf("drawn %v after a stop at the first; want only 0", ex.drawn)
	}
	if saved, err := store.Load(r.Doc.SweepID); err != nil || saved.Status != StatusStopped {
		t.Fatalf("saved %+v, %v; want stopped", saved, err)
	}
}
