package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"stratbench/engine"
	"stratbench/job"
	"stratbench/sweep"
)

// Sweep is a sweep ready to run: its folder, document and plan, its
// results open, its data, and how its runs run.
type Sweep struct {
	Store *sweep.Store
	Doc   *sweep.Document
	Spec  *sweep.Spec
	Plan  *sweep.Plan
	Folds []sweep.Fold
	// Results is the sweep's results.jsonl, open; Prior what it held: those
	// runs do not run again.
	Results *sweep.Results
	Prior   []sweep.Result
	// Jobs is how many runs at once were asked for (sweep.Slots bounds a
	// local pool by the machine).
	Jobs int
	Data *Data
	// Runs is every local run's Config but its params and sweep tag.
	Runs engine.Config
	// Executor runs the items; nil is the local pool, its runs started by
	// Starter.
	Executor sweep.RunExecutor
	// Starter, when set, starts the local runs (its templates started
	// ahead: Ahead); nil: Runner makes one. Runner's done closes it.
	Starter *Starter
	// JobStore is the home's job store, whose runs' equity records the
	// sweep's robustness block is computed from when Robustness is nil
	// (with Data's bar times); nil with it: none is computed.
	JobStore *job.Store
	// Robustness is what the runner computes the sweep's robustness block
	// from when it finishes (docs/robustness.md); nil: none is computed.
	Robustness *sweep.RobustnessSource
}

// Runner returns the sweep's runner, its runs on a pool of Slots slots
// (or on the sweep's own Executor, a Ray cluster), and what to call once
// it has run: it ends the slots' workers and returns what the sweep tells
// the user of how its runs started (Starter.Notices).
func (s *Sweep) Runner() (*sweep.Runner, func() (notices []string)) {
	r := &sweep.Runner{Store: s.Store, Doc: s.Doc, Spec: s.Spec, Plan: s.Plan, Folds: s.Folds,
		Results: s.Results, Prior: s.Prior, Executor: s.Executor, Robustness: s.Robustness}
	if r.Robustness == nil && s.JobStore != nil && s.Data != nil {
		r.Robustness = &sweep.RobustnessSource{Bars: s.Data.BarTimes, EquityPoints: s.JobStore.EquityPoints}
	}
	if s.Executor != nil {
		return r, func() []string { return nil }
	}
	st := s.Starter
	if st == nil {
		st = NewStarter(s.Runs, s.Jobs)
	}
	st.Use(s.Data, s.Doc.SweepID, s.Doc.Strategy.SHA256)
	r.Executor = &sweep.Pool{Slots: s.Slots(), Starter: st}
	return r, func() []string {
		notices := st.Notices()
		st.Close()
		return notices
	}
}

// Slots is how many runs the local pool runs at once: Jobs, never more
// than the runs left nor than sweep.LocalSlotsPerCPU a CPU (the templates
// are bounded by the CPUs: engine.NewPool).
func (s *Sweep) Slots() int {
	return sweep.Slots(s.Jobs, s.RunsLeft(), runtime.NumCPU())
}

// RunsLeft is how many runs the sweep has no result for.
func (s *Sweep) RunsLeft() int64 {
	return s.Plan.Runs(len(s.Folds)) - int64(len(s.Prior))
}

// Abandon saves a sweep that could not start its runs as stopped
// (resumable), closes its results, and returns err.
func (s *Sweep) Abandon(err error) error {
	s.Doc.Finish(true, time.Now())
	if serr := s.Store.Save(s.Doc); serr != nil {
		err = errors.Join(err, serr)
	}
	s.Results.Close()
	return err
}

// Folds tiles the sweep's window of d into spec's walk-forward folds
// (none for a plain sweep), and refuses a fold window without bars before
// any run (a *sweep.UsageError), rather than failing the sweep when its
// run cannot open its data (and every resume after it).
func Folds(ctx context.Context, spec *sweep.Spec, d *Data) ([]sweep.Fold, error) {
	if spec.WalkForward() == nil {
		return nil, nil
	}
	bars, err := d.bars(ctx)
	if err != nil {
		return nil, err
	}
	folds, err := spec.Folds(bars, d.opts.Window.From, d.opts.Window.To)
	if err != nil {
		return nil, err
	}
	if err := d.checkFoldWindows(ctx, spec.WindowCheck(folds)); err != nil {
		return nil, err
	}
	return folds, nil
}

// ReadStrategy resolves the strategy file as a run does (absolute, through
// symlinks) and returns its path and content hash. The path may come from
// a sweep's document (a resume, prune): anything but a regular file (a
// FIFO, /dev/zero) is refused before it is read, and the content is hashed
// as it streams, never held whole. Its errors are *InputErrors.
func ReadStrategy(arg string) (path, sum string, err error) {
	path, err = filepath.Abs(arg)
	if err != nil {
		return "", "", &InputError{fmt.Errorf("strategy: %w", err)}
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	// O_NONBLOCK: the open of a FIFO does not wait for its writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", "", &InputError{fmt.Errorf("strategy: %w", err)}
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		if err == nil {
			err = fmt.Errorf("%s is not a regular file", path)
		}
		return "", "", &InputError{fmt.Errorf("strategy: %w", err)}
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", "", &InputError{fmt.Errorf("strategy: %w", err)}
	}
	return path, hex.EncodeToString(h.Sum(nil)), nil
}

// Ahead starts what a sweep needs as soon as the interpreter's path is
// known (a session's probe: Start), so that it runs while the interpreter
// is probed and the data loads: the templates of its local runs (they run
// nothing of the strategy's folder) and the MANIFEST read (which runs none
// of the strategy's code). Both are of the interpreter at that path;
// Settle replaces the templates, and Params reads again, when the probe
// names another interpreter (a launcher that is a program; for a script,
// such as a pyenv shim, nothing starts ahead).
type Ahead struct {
	jobs  int  // the sweep's slots
	local bool // the runs are local (not Ray's): their templates start
	// path is the interpreter Start started with, "" when it started
	// nothing (a script).
	path string
	// starter is the runs' starter (with the templates of path until
	// Settle), nil before Start and when the runs are not local.
	starter *Starter
	// manifest is the MANIFEST read Start began, with path; nil if none.
	manifest *manifestAhead
}

// manifestAhead is a MANIFEST read started ahead of the probe.
type manifestAhead struct {
	done chan struct{} // closed when the read has ended
	// sum is the strategy's content the params are of: its hash before
	// and after the read, "" when they differ (a save in between).
	sum    string
	params map[string]any
	err    error
}

// NewAhead returns what starts ahead for a sweep of jobs slots, whose runs
// are local or not (Ray's: then no template starts). The caller closes it.
func NewAhead(jobs int, local bool) *Ahead {
	return &Ahead{jobs: jobs, local: local}
}

// Start starts, with the interpreter as far as it is known (cfg.Python:
// all of it when the probe's answer was kept, else only its path), the
// MANIFEST read of cfg.Strategy and the templates of the runs of cfg (the
// Config every run has but its params and sweep tag). It starts nothing
// for a script (a pyenv shim): the probe will name the interpreter the
// script runs, and what was started with the script would be replaced
// after paying its start.
func (a *Ahead) Start(ctx context.Context, cfg engine.Config) {
	py := cfg.Python
	if engine.IsScript(py.Executable) {
		return
	}
	a.path = py.Executable
	m := &manifestAhead{done: make(chan struct{})}
	a.manifest = m
	strategy := cfg.Strategy
	// The goroutine's owner is a: Close waits for it. ReadManifest is
	// bounded by ctx and manifestTimeout.
	go func() {
		defer close(m.done)
		_, before, err := ReadStrategy(strategy)
		if err != nil {
			m.err = err
			return
		}
		m.params, m.err = ReadManifest(ctx, py, strategy)
		if _, after, err := ReadStrategy(strategy); err == nil && after == before {
			m.sum = before
		}
	}()
	if !a.local {
		return
	}
	a.starter = NewStarter(cfg, a.jobs)
	a.starter.Warm()
}

// Settle makes the starter of the sweep's local runs that of cfg (the
// interpreter the probe found), its templates started: those started
// ahead when they are of its interpreter, else new ones. It does nothing
// when the runs are not local.
func (a *Ahead) Settle(cfg engine.Config) {
	if !a.local {
		return
	}
	if a.starter != nil && a.path != cfg.Python.Executable {
		a.starter.Close()
		a.starter = nil
	}
	if a.starter == nil {
		a.starter = NewStarter(cfg, a.jobs)
		a.starter.Warm()
		return
	}
	a.starter.cfg = cfg // the probed interpreter, at the templates' path
}

// Starter is the starter of the sweep's local runs that Settle made; nil
// when they are not local.
func (a *Ahead) Starter() *Starter { return a.starter }

// Params is a ManifestReader: the MANIFEST read ahead when it read the
// content whose hash is sum with py, else a read now.
func (a *Ahead) Params(ctx context.Context, py *engine.Interpreter, strategy, sum string) (map[string]any, error) {
	if m := a.manifest; m != nil {
		select {
		case <-m.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if m.err == nil && a.path == py.Executable && m.sum == sum {
			return m.params, nil
		}
	}
	return ReadManifest(ctx, py, strategy)
}

// Close closes the starter (a second Close does nothing) and waits for the
// MANIFEST read started ahead.
func (a *Ahead) Close() {
	if a.starter != nil {
		a.starter.Close()
	}
	if a.manifest != nil {
		<-a.manifest.done
	}
}
