package sweep

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"time"
)

// DefaultSaveEvery is how often, at most, a Runner rewrites sweep.json
// while runs finish: results.jsonl has every result the moment it ends,
// and sweep.json, which holds them all, is rewritten whole.
const DefaultSaveEvery = time.Second

// Runner runs a sweep: its plan (per fold and phase in a walk-forward)
// through an executor. Each result is appended to results.jsonl (and
// synced) as its run ends, then handed to OnResult; sweep.json is
// rewritten atomically at most every SaveEvery and once at the end.
type Runner struct {
	// Store is the sweeps folder; Doc the sweep's document, created by
	// Store.Create or, for a resume, loaded. Run sets its status, counts,
	// best, runs and walk-forward.
	Store *Store
	Doc   *Document
	// Spec and Plan are the sweep's; Folds its walk-forward folds (nil for
	// a plain sweep).
	Spec  *Spec
	Plan  *Plan
	Folds []Fold
	// Results is the sweep's results.jsonl, open (Store.OpenResults), and
	// Prior what it held then: those runs do not run again.
	Results *Results
	Prior   []Result
	// Executor runs the items.
	Executor RunExecutor
	// OnResult, when set, is called with each new result after it is
	// appended, one call at a time, in the order they are appended.
	OnResult func(Result)
	// OnSave, when set, is called with a copy of the document (without
	// its runs) after each save, the last one included, one call at a
	// time. Tally replaces the document's parts rather than changing
	// them, so the copy is the caller's to keep.
	OnSave func(Document)
	// SaveEvery bounds how often sweep.json is rewritten while runs end;
	// 0 means DefaultSaveEvery.
	SaveEvery time.Duration
	// Robustness, when set, is what the document's robustness block is
	// computed from when the sweep finishes (robustness.go).
	Robustness *RobustnessSource
}

// Run runs what has no result yet. Closing stop stops it gracefully (the
// runs in flight stop, on_finish runs; see RunExecutor); cancelling ctx kills
// the runs in flight. It ends by saving the document: stopped when stop
// (or ctx) ended it or the executor failed, else failed when a run failed,
// else passed. The error is the executor's or the store's; a run that
// failed is a result, not an error.
func (r *Runner) Run(ctx context.Context, stop <-chan struct{}) error {
	if r.SaveEvery <= 0 {
		r.SaveEvery = DefaultSaveEvery
	}
	results := append([]Result(nil), r.Prior...)
	done := make(map[resultKey]struct{}, len(results))
	for i := range results {
		done[results[i].key()] = struct{}{}
	}
	// While it runs, the document's duration is that of its earlier
	// sessions (0 for a new sweep): a session that crashes leaves them.
	r.Doc.Status, r.Doc.FinishedAt, r.Doc.DurationMS = StatusRunning, nil, r.Doc.priorMS
	r.Doc.Robustness, r.Doc.RobustnessReason = nil, ""
	r.Doc.Tally(r.Plan, r.Folds, results)
	if err := r.save(); err != nil {
		return err
	}
	lastSave := time.Now()
	finished := func(it Item, res Result) error {
		res.Index, res.Fold, res.Phase = it.Combination.Index, it.Fold, it.Phase
		if res.Params == nil {
			res.Params = it.Combination.Params
		}
		if err := r.Results.Append(res); err != nil {
			return err
		}
		results = append(results, res)
		done[res.key()] = struct{}{}
		if r.OnResult != nil {
			r.OnResult(res)
		}
		if time.Since(lastSave) >= r.SaveEvery {
			r.Doc.Tally(r.Plan, r.Folds, results)
			if err := r.save(); err != nil {
				return err
			}
			lastSave = time.Now()
		}
		return nil
	}
	// The items are drawn until the sweep is asked to end: a stop ends
	// the drawing too (the plan may look at millions of combinations the
	// constraint drops before it yields the next).
	draw, endDraw := context.WithCancel(ctx)
	defer endDraw()
	go func() {
		select {
		case <-stop:
			endDraw()
		case <-draw.Done():
		}
	}()
	// Each phase's items are drawn from a copy of what is done when it
	// starts: finished adds to the originals while the items are drawn.
	err := r.Executor.Execute(ctx, r.items(draw, PhaseNone, maps.Clone(done), nil), stop, finished)
	if err == nil && r.Folds != nil && !ended(ctx, stop) {
		err = r.Executor.Execute(ctx, r.items(draw, PhaseTest, maps.Clone(done), slices.Clone(results)), stop, finished)
	}
	r.Doc.Tally(r.Plan, r.Folds, results)
	stopped := err != nil || ended(ctx, stop) && r.Doc.Counts.Done < r.Doc.Counts.Total
	r.finishRobustness(ctx, stop, stopped)
	r.Doc.Finish(stopped, time.Now())
	if serr := r.save(); serr != nil {
		return errors.Join(err, serr)
	}
	return err
}

// save writes sweep.json and hands a copy to OnSave.
func (r *Runner) save() error {
	if err := r.Store.Save(r.Doc); err != nil {
		return err
	}
	if r.OnSave != nil {
		doc := *r.Doc
		doc.Runs = nil
		r.OnSave(doc)
	}
	return nil
}

// ended reports whether the sweep was asked to end.
func ended(ctx context.Context, stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return ctx.Err() != nil
	}
}

// items yields the runs of one phase that have no result: a plain sweep's
// combinations, or every fold's train combinations (PhaseNone asks for
// the first phase), or every fold's test run of the best train
// combination (PhaseTest, ranked over results). They end early when ctx
// ends.
func (r *Runner) items(ctx context.Context, phase Phase, done map[resultKey]struct{}, results []Result) iter.Seq[Item] {
	has := func(fold *int, ph Phase, index int64) bool {
		_, ok := done[(&Result{Fold: fold, Phase: ph, Index: index}).key()]
		return ok
	}
	return func(yield func(Item) bool) {
		if r.Folds == nil {
			for c := range r.Plan.All(ctx) {
				if !has(nil, PhaseNone, c.Index) && !yield(Item{Combination: c, Args: r.Spec.Args(c)}) {
					return
				}
			}
			return
		}
		if phase == PhaseNone {
			for k := range r.Folds {
				fold := k
				for c := range r.Plan.All(ctx) {
					if has(&fold, PhaseTrain, c.Index) {
						continue
					}
					if !yield(Item{Fold: &fold, Phase: PhaseTrain, Combination: c, Args: r.Spec.Args(c), Window: &r.Folds[k].Train}) {
						return
					}
				}
			}
			return
		}
		obj := r.Spec.Objective()
		byFold := make([][]Result, len(r.Folds))
		for _, res := range results {
			if res.Fold != nil && *res.Fold < len(r.Folds) {
				byFold[*res.Fold] = append(byFold[*res.Fold], res)
			}
		}
		for k := range r.Folds {
			best := obj.bestOf(byFold[k], PhaseTrain)
			if best == nil {
				continue // no train run passed: the fold has no test run
			}
			fold := k
			if has(&fold, PhaseTest, best.r.Index) {
				continue
			}
			c := r.Spec.At(best.r.Index)
			if !yield(Item{Fold: &fold, Phase: PhaseTest, Combination: c, Args: r.Spec.Args(c), Window: &r.Folds[k].Test}) {
				return
			}
		}
	}
}

// CheckResume refuses to resume a sweep whose strategy file or data
// changed since it started: its runs would not be comparable. sha256 and
// dataFingerprint are the strategy's and the data's now.
func CheckResume(doc *Document, sha256, dataFingerprint string) error {
	if doc.Strategy.SHA256 != sha256 {
		return usage(FieldResume, doc.SweepID, fmt.Sprintf("the strategy %s changed since the sweep started (sha256 %.12s…, now %.12s…): start a new sweep",
			doc.Strategy.Path, doc.Strategy.SHA256, sha256))
	}
	if doc.Data.Fingerprint != dataFingerprint {
		// Or a stratbench before 2026-12-05 started it: its own Parquet
		// reader hashes a file's column chunks in one pass, where the
		// older reader hashed each chunk apart.
		return usage(FieldResume, doc.SweepID, fmt.Sprintf("the data %s changed since the sweep started "+
			"(or an older stratbench started it, which hashed Parquet files differently): start a new sweep", doc.Data.Source))
	}
	return nil
}

// CheckPrior refuses (a *UsageError) to resume with results that are not
// runs of the plan as it is now: a result whose (fold, phase, index) the
// plan has no run for, whose params are not those the plan has at its
// index, or a fold's test run of another combination than the fold's best
// train run now is; and results of walk-forward folds other than those
// the spec makes now. The plan comes from the document's spec, and the
// results from results.jsonl: such a mismatch means one of them was
// edited since the runs ran (a grid changed by hand, say), and kept, the
// results would stand for runs they are not (index is stable across
// resumes) while the combinations they hid ran again under other indices.
//
// path names the results file, whose line i+1 prior[i] is (ReadResults
// reads every complete line as a result, or fails); doc is the sweep's
// document, whose walk_forward records the folds the results ran on.
func CheckPrior(doc *Document, path string, spec *Spec, plan *Plan, folds []Fold, prior []Result) error {
	refuse := func(reason string) error {
		return usage(FieldResume, doc.SweepID, reason+": the sweep's spec (sweep.json) or its results were edited since these runs ran; "+
			"a resume would mix runs of two plans: start a new sweep")
	}
	if err := checkFolds(doc, folds, prior, refuse); err != nil {
		return err
	}
	obj := spec.Objective()
	byFold := make([][]Result, len(folds))
	for i := range prior {
		r := &prior[i]
		at := fmt.Sprintf("%s line %d", path, i+1)
		switch {
		case folds == nil && r.Fold != nil:
			return refuse(fmt.Sprintf("%s: %s is a walk-forward run, and the sweep has no walk-forward", at, r.key()))
		case folds != nil && r.Fold == nil:
			return refuse(fmt.Sprintf("%s: index %d is not a walk-forward run, and the sweep has %s", at, r.Index, plural(len(folds), "fold")))
		case r.Fold != nil && *r.Fold >= len(folds):
			return refuse(fmt.Sprintf("%s: %s: the sweep has %s", at, r.key(), plural(len(folds), "fold")))
		case r.Index >= spec.Size():
			return refuse(fmt.Sprintf("%s: index %d (%s) is past the grid's %s", at, r.Index, r.Params, plural(spec.Size(), "combination")))
		}
		planned := spec.At(r.Index).Params
		if !sameParams(r.Params, planned) {
			return refuse(fmt.Sprintf("%s: index %d ran %s, and the sweep's plan has %s at index %d", at, r.Index, r.Params, planned, r.Index))
		}
		if !plan.Has(r.Index) {
			return refuse(fmt.Sprintf("%s: index %d (%s) is not in the sweep's plan (its constraint or sample leaves it out)", at, r.Index, r.Params))
		}
		if r.Fold != nil {
			byFold[*r.Fold] = append(byFold[*r.Fold], *r)
		}
	}
	// A fold's test run is its best train run's combination: the train
	// runs all ran before it, and the objective ranks them as it did
	// then, unless the objective (or a result) was edited.
	bests := map[int]*ranked{}
	for i := range prior {
		r := &prior[i]
		if r.Phase != PhaseTest {
			continue
		}
		k := *r.Fold
		best, ok := bests[k]
		if !ok {
			best = obj.bestOf(byFold[k], PhaseTrain)
			bests[k] = best
		}
		switch {
		case best == nil:
			return refuse(fmt.Sprintf("%s line %d: fold %d has a test run (index %d) and no train run that %s ranks",
				path, i+1, k, r.Index, objectiveText(obj)))
		case best.r.Index != r.Index:
			return refuse(fmt.Sprintf("%s line %d: fold %d's test run is of index %d (%s), and the objective (%s) ranks index %d (%s) best",
				path, i+1, k, r.Index, r.Params, objectiveText(obj), best.r.Index, best.r.Params))
		}
	}
	return nil
}

// checkFolds refuses results of walk-forward folds whose windows are not
// those of folds: the document records the folds its results ran on.
func checkFolds(doc *Document, folds []Fold, prior []Result, refuse func(string) error) error {
	if doc.WalkForward == nil || folds == nil || !slices.ContainsFunc(prior, func(r Result) bool { return r.Fold != nil }) {
		return nil
	}
	ran := doc.WalkForward.Folds
	for k := range min(len(ran), len(folds)) {
		if !sameWindow(ran[k].Train, folds[k].Train) || !sameWindow(ran[k].Test, folds[k].Test) {
			return refuse(fmt.Sprintf("fold %d ran on train %s and test %s (sweep.json walk_forward.folds), and the sweep's walk-forward now makes train %s and test %s",
				k, ran[k].Train, ran[k].Test, folds[k].Train, folds[k].Test))
		}
	}
	if len(ran) != len(folds) {
		return refuse(fmt.Sprintf("the results ran on %s (sweep.json walk_forward.folds), and the sweep's walk-forward now makes %s",
			plural(len(ran), "fold"), plural(len(folds), "fold")))
	}
	return nil
}

// sameWindow reports whether a and b span the same instants.
func sameWindow(a, b Window) bool { return a.From.Equal(b.From) && a.To.Equal(b.To) }

// sameParams reports whether a and b hold the same params with the same
// values (of the same type), in any order.
func sameParams(a, b Params) bool {
	if len(a) != len(b) {
		return false
	}
	for _, p := range a {
		if v, ok := b.Get(p.Name); !ok || v != p.Value {
			return false
		}
	}
	return true
}

// objectiveText is the objective as the flags give it.
func objectiveText(o Objective) string {
	if o.Minimize {
		return o.Metric + ", minimized"
	}
	return o.Metric
}

// plural is n and the noun, with an s when n is not 1.
func plural[T ~int | ~int64](n T, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
