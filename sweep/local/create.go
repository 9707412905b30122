package local

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"stratbench/engine"
	"stratbench/internal/units"
	"stratbench/job"
	"stratbench/sweep"
)

// Setup is what a new sweep is made of (Create).
type Setup struct {
	Strategy string              // the strategy file
	Python   *engine.Interpreter // the interpreter the probe found
	// Runs is every local run's Config but its params and sweep tag; its
	// Home is the home the sweep's folder goes in.
	Runs engine.Config
	Data *Data
	// JobStore is the home's job store (the robustness block's records).
	JobStore *job.Store
	Jobs     int // the runs at once asked for (the document's spec.jobs)
	// RunFlags are the run flags a resume needs, as given: Create makes
	// the data's paths absolute and records the interpreter (its version
	// only with Local).
	RunFlags sweep.RunFlags
	Local    bool // the runs run on this machine
	// Read reads the MANIFEST's params; Parse makes the spec of them (its
	// refusals are the caller's to name).
	Read  ManifestReader
	Parse func(declared map[string]any) (*sweep.Spec, error)
	// Note tells the user what the setup does when it takes long, Cut of
	// a last fold whose test window the data's end cuts short (Plan).
	Note func(string)
	Cut  func(last sweep.Fold)
}

// Create checks a spec (made by Parse from the MANIFEST's params, which
// Read reads) against the strategy as it is now, plans it and creates the
// sweep's folder, its results open. A refusal (an *InputError, a
// *sweep.UsageError, or Read's or Parse's own) creates nothing, and
// neither does a ctx that ended meanwhile.
func Create(ctx context.Context, st Setup) (*Sweep, error) {
	strategy, sum, err := ReadStrategy(st.Strategy)
	if err != nil {
		return nil, err
	}
	declared, err := st.Read(ctx, st.Python, strategy, sum)
	if err != nil {
		return nil, err
	}
	spec, err := st.Parse(declared)
	if err != nil {
		return nil, err
	}
	folds, plan, err := Plan(ctx, spec, st.Data, st.Cut, st.Note)
	if err != nil {
		return nil, err
	}
	source, from, to := st.Data.Info()
	flags := st.RunFlags
	flags.Data = nil
	for _, p := range st.RunFlags.Data {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, &InputError{err}
		}
		flags.Data = append(flags.Data, abs)
	}
	fingerprint, err := st.Data.Fingerprint(ctx)
	if err != nil {
		return nil, &InputError{err}
	}
	flags.Python = st.Python.Executable
	if st.Local {
		flags.PythonVersion = st.Python.Version
	}
	doc := &sweep.Document{
		Status:   sweep.StatusRunning,
		Strategy: sweep.StrategyRef{Path: strategy, SHA256: sum},
		Data:     sweep.DataRef{Source: source, From: from, To: to, Fingerprint: fingerprint},
		Spec:     spec.Doc(),
		Executor: sweep.Executor{Kind: sweep.ExecutorLocal},
		RunFlags: &flags,
	}
	doc.Spec.Jobs = st.Jobs
	store, err := sweep.OpenStore(st.Runs.Home)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		// A stop signal during the setup: the steps before may not have
		// looked (a cached probe, data in memory, a plan without a
		// constraint), and no sweep folder is made for it.
		return nil, err
	}
	results, err := store.Create(doc)
	if err != nil {
		return nil, err
	}
	return &Sweep{Store: store, Doc: doc, Spec: spec, Plan: plan, Folds: folds,
		Results: results, Jobs: st.Jobs, Data: st.Data, JobStore: st.JobStore, Runs: st.Runs}, nil
}

// Plan tiles the data into walk-forward folds (none for a plain sweep)
// and plans the combinations. A plan that keeps no combination is refused
// (a *sweep.UsageError). cut is told of a last fold whose test window is
// under a tenth of the others', cut short by the end of the data window
// (legal, and seldom meant: a bare date as the window's end is that day's
// first instant); note of what a plan that takes long does.
func Plan(ctx context.Context, spec *sweep.Spec, d *Data, cut func(last sweep.Fold), note func(string)) ([]sweep.Fold, *sweep.Plan, error) {
	folds, err := Folds(ctx, spec, d)
	if err != nil {
		return nil, nil, err
	}
	if wf := spec.WalkForward(); wf != nil {
		if last := folds[len(folds)-1]; last.Test.Duration() < wf.Test/10 {
			cut(last)
		}
	}
	plan, err := planTelling(ctx, spec, note)
	if err != nil {
		return nil, nil, err
	}
	if err := spec.CheckPlan(plan); err != nil {
		return nil, nil, err
	}
	return folds, plan, nil
}

// planNoteAfter is how long a plan may take before the sweep says that it
// is planning. A constraint is tried on every combination of the grid, and
// a random sample draws a key for each: at the grid's most (a billion
// combinations) that is a minute or more of CPU before the first run, and
// the terminal would stay silent all the while.
const planNoteAfter = time.Second

// planTelling plans spec and, when the plan takes more than planNoteAfter,
// tells note what it is doing (once, from a goroutine of its own that has
// ended when planTelling returns: nothing is said after it).
func planTelling(ctx context.Context, spec *sweep.Spec, note func(string)) (*sweep.Plan, error) {
	done := make(chan struct{})
	told := make(chan struct{})
	go func() {
		defer close(told)
		t := time.NewTimer(planNoteAfter)
		defer t.Stop()
		select {
		case <-t.C:
			note(planningNote(spec))
		case <-done:
		}
	}()
	plan, err := spec.Plan(ctx)
	close(done)
	<-told
	return plan, err
}

// planningNote says what a slow plan does, and how to stop it.
func planningNote(spec *sweep.Spec) string {
	doc := spec.Doc()
	what := "drawing the sample"
	if doc.Constraint != nil {
		what = "trying the constraint"
	}
	return fmt.Sprintf("planning the sweep: %s on each of the grid's %s combinations before the first run (ctrl-c stops)",
		what, units.Count(spec.Size()))
}

// Stoppable runs f, a step of a sweep's setup that does not look at ctx
// (it decodes or checks what a sweep holds: seconds for a sweep of a
// million combinations, whose sweep.json is 16 MB), so that a stop signal
// meanwhile is answered at once: when ctx ends first, Stoppable returns
// ctx's error and leaves f to end on its own, its result dropped. f must
// only compute (take no lock, leave nothing open, write nothing): the
// command ends right after.
func Stoppable[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	// The goroutine's owner is this call until ctx ends; then the process,
	// which exits: f is bounded work and sends to a buffered channel.
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
