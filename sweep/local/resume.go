package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"stratbench/engine"
	"stratbench/job"
	"stratbench/sweep"
	"time"
)

// RanPython is the Python version a sweep's runs ran, and how that is
// known, for a resume that must not mix versions: the version
// stratbench's own probe found when the sweep started (RunFlags.
// PythonVersion); for a document of an older version, which has none, the
// version a kept run's report records (its worker reported it: the only
// word there is), loaded by load. "" when neither says.
func RanPython(doc *sweep.Document, load func(id string) (*job.Report, error)) (version, how string) {
	if doc.RunFlags != nil && doc.RunFlags.PythonVersion != "" {
		return doc.RunFlags.PythonVersion, "when the sweep started"
	}
	for _, r := range doc.Runs {
		if r.JobID == "" {
			continue
		}
		if rep, err := load(r.JobID); err == nil && rep.Python.Version != "" {
			return rep.Python.Version, "as job " + r.JobID + " reported"
		}
	}
	return "", ""
}

// PythonChangedError refuses a local resume whose interpreter is now
// another Python version than the sweep's runs ran: the runs would not be
// comparable. The command says which interpreter (its flag) that was.
type PythonChangedError struct {
	Ran, How string // the version the runs ran, and how that is known (RanPython)
	Now      *engine.Interpreter
}

func (e *PythonChangedError) Error() string {
	return fmt.Sprintf("the sweep's runs ran Python %s (%s), and the interpreter is now Python %s (%s)", e.Ran, e.How, e.Now.Version, e.Now.Executable)
}

// CheckPython refuses (*PythonChangedError) a local resume of doc whose
// interpreter py (nil: none probed, nothing to check) is another Python
// version than RanPython says the runs ran; load loads a run's report.
func CheckPython(doc *sweep.Document, py *engine.Interpreter, load func(id string) (*job.Report, error)) error {
	if py == nil {
		return nil
	}
	ran, how := RanPython(doc, load)
	if ran == "" || ran == py.Version {
		return nil
	}
	return &PythonChangedError{Ran: ran, How: how, Now: py}
}

// StrategyAsRun reports whether the sweep's strategy file can be read
// (readable) and still has the content the sweep ran (same): a resume
// refuses any other. The path is the sweep document's: it is read only
// when it is a regular file no larger than maxStrategyCheck (a larger one
// is no strategy a sweep ran).
func StrategyAsRun(doc *sweep.Document) (readable, same bool) {
	if info, err := os.Stat(doc.Strategy.Path); err != nil || !info.Mode().IsRegular() || info.Size() > maxStrategyCheck {
		return false, false
	}
	_, sum, err := ReadStrategy(doc.Strategy.Path)
	return err == nil, err == nil && sum == doc.Strategy.SHA256
}

// maxStrategyCheck is the largest strategy file StrategyAsRun hashes.
const maxStrategyCheck = 64 << 20

// Restore rebuilds a stopped sweep's spec from its document (doc, whose
// refusals are Saved *sweep.UsageErrors: values read from the document,
// not flags) against the MANIFEST's params as read reads them now, plans
// it, and checks that the results it kept (prior, the lines of the
// results file at resultsPath) are runs of that plan: a spec or results
// edited by hand would make them stand for runs they are not. note and
// cut are Plan's.
func Restore(ctx context.Context, doc *sweep.Document, prior []sweep.Result, resultsPath string, d *Data,
	py *engine.Interpreter, strategy, sum string, read ManifestReader,
	cut func(sweep.Fold), note func(string)) (*sweep.Spec, []sweep.Fold, *sweep.Plan, error) {
	declared, err := read(ctx, py, strategy, sum)
	if err != nil {
		return nil, nil, nil, err
	}
	spec, err := Stoppable(ctx, func() (*sweep.Spec, error) { return sweep.RestoreSpec(doc.Spec, declared) })
	if err != nil {
		return nil, nil, nil, err
	}
	folds, plan, err := Plan(ctx, spec, d, cut, note)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := sweep.CheckPrior(doc, resultsPath, spec, plan, folds, prior); err != nil {
		return nil, nil, nil, err
	}
	return spec, folds, plan, nil
}

// Resumed is what a stopped sweep resumes with (Resume): its store and
// document, its results open (their lock held) and what they kept, the
// strategy as it is now (its path and sha256), the runs at once asked
// for, and where its runs run.
type Resumed struct {
	Store         *sweep.Store
	Doc           *sweep.Document
	Results       *sweep.Results
	Prior         []sweep.Result
	Strategy, Sum string
	Jobs          int
	Local         bool // the runs run on this machine
	// Cut and Note are Plan's.
	Cut  func(last sweep.Fold)
	Note func(string)
}

// Resume sets up a stopped sweep to run what it has no result for, on
// op's session and data: a sweep that ran here and runs here again
// records the interpreter's version when its document (an older
// stratbench's) has none, its timing resumes, and its spec is restored
// and its kept results checked against the plan (Restore, whose refusals
// are Resume's) before anything runs or is written.
func Resume(ctx context.Context, op *Opened, r Resumed) (*Sweep, error) {
	doc, py := r.Doc, op.Session.Python()
	if r.Local && doc.Executor.Kind == sweep.ExecutorLocal && doc.RunFlags.PythonVersion == "" && py != nil {
		doc.RunFlags.PythonVersion = py.Version // CheckPython found it the same
	}
	doc.Resume(time.Now())
	spec, folds, plan, err := Restore(ctx, doc, r.Prior, filepath.Join(r.Store.Dir(doc.SweepID), sweep.ResultsFile), op.Data,
		py, r.Strategy, r.Sum, op.Ahead.Params, r.Cut, r.Note)
	if err != nil {
		return nil, err
	}
	doc.Spec.Jobs = r.Jobs
	if r.Local {
		doc.Executor.Kind = sweep.ExecutorLocal
	}
	return &Sweep{Store: r.Store, Doc: doc, Spec: spec, Plan: plan, Folds: folds, Results: r.Results, Prior: r.Prior, Jobs: r.Jobs,
		Data: op.Data, JobStore: op.Session.Store(), Runs: op.Session.RunConfig(py), Starter: op.Ahead.Starter()}, nil
}

// ErrNoRunFlags refuses a resume of a sweep whose document records no
// run flags: they are what its runs would run with.
var ErrNoRunFlags = errors.New("the sweep's document does not record its run flags: it cannot be resumed")

// LoadError is a sweep's document that Claim could not load (or whose
// load a stop ended), told apart from the errors of the results' lock.
type LoadError struct{ Err error }

func (e *LoadError) Error() string { return e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }

// Claimed is a stopped sweep a resume holds (Claim): its document, and
// its results open (their lock held) with what they kept.
type Claimed struct {
	Doc     *sweep.Document
	Results *sweep.Results
	Back    *sweep.ReadBack
}

// Claim opens sweep id of store for a resume: the results' lock first
// (sweep.ErrBusy when another holds it), the document after it (a
// *LoadError), which must record its run flags (ErrNoRunFlags). A
// document read before the lock could be one that another resume,
// finishing the sweep in between, has since rewritten, and this one would
// save its stale copy over it; held from here, the lock makes any other
// resume (or a `status`) see the sweep running. The caller closes the
// results; on an error there are none to close.
func Claim(ctx context.Context, store *sweep.Store, id string) (*Claimed, error) {
	results, rb, err := store.OpenResults(id)
	if err != nil {
		return nil, err
	}
	doc, err := Stoppable(ctx, func() (*sweep.Document, error) { return store.Load(id) })
	switch {
	case err != nil:
		err = &LoadError{err}
	case doc.RunFlags == nil:
		err = ErrNoRunFlags
	}
	if err != nil {
		results.Close()
		return nil, err
	}
	return &Claimed{Doc: doc, Results: results, Back: rb}, nil
}
