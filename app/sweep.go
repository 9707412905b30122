package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"stratbench/engine"
	"stratbench/internal/signals"
	"stratbench/present"
	"stratbench/session"
	"stratbench/sweep"
	"stratbench/sweep/local"
	"stratbench/sweep/ray"
	"stratbench/ui/components"
)

// SweepOptions are the options of `stratbench sweep` (docs/sweeps.md).
// The run flags are RunOptions' (Output is text, json or jsonl); the rest
// are the sweep's own flags of the same names.
type SweepOptions struct {
	RunOptions

	Grid        []string // --grid NAME=V1,V2,... or NAME=LO:HI:STEP, in order
	Random      int64    // --random N
	RandomSet   bool     // --random was given
	Seed        int64    // --seed
	SeedSet     bool     // --seed was given
	Constraint  string   // --constraint EXPR
	Metric      string   // --metric; "" for sharpe
	Minimize    bool     // --minimize
	Jobs        int      // --jobs; 0 for this machine's CPU count
	WalkForward string   // --walk-forward train=DUR,test=DUR[,step=DUR][,anchored]
	Executor    string   // --executor local|ray; "" for local
	RayAddress  string   // --ray-address
	Resume      string   // --resume SWEEP_ID: run what the sweep has no result for
	ResumeSet   bool     // --resume was given (perhaps as --resume "")
	CI          bool     // --ci: headless
}

// Sweep runs a sweep (or resumes one), headless with --ci and in the sweep
// view without: each combination an ordinary job on --jobs slots, its
// result appended to the sweep's results.jsonl as it ends. It returns nil
// when every run passed, exit 1 when some run failed, exit 2 for a spec
// refused before any run, and 128 + n when signal n stopped it (the sweep
// is then resumable).
func Sweep(ctx context.Context, o SweepOptions) error {
	if o.ResumeSet && (o.Resume == "" || strings.HasPrefix(o.Resume, "-")) {
		// `--resume --ci`: the parser takes the next flag for the id (and
		// the user gets the view's refusal, or a word of --output as the
		// STRATEGY): say what was forgotten, first.
		took := ""
		if o.Resume != "" {
			took = fmt.Sprintf(" (it took the flag %s for the id)", o.Resume)
		}
		return usage(fmt.Errorf("--resume needs a sweep id: stratbench sweep --resume SWEEP_ID [--jobs N] [--ci] [--output …]%s; "+
			"`stratbench sweeps` lists the sweeps", took))
	}
	if err := checkOutput(o.Output, "text", "json", "jsonl"); err != nil {
		return err
	}
	switch o.Executor {
	case "", string(sweep.ExecutorLocal), string(sweep.ExecutorRay):
	default:
		return usage(fmt.Errorf("--executor %q: want local or ray", o.Executor))
	}
	if o.RayAddress != "" && o.Executor != string(sweep.ExecutorRay) {
		// The executor is chosen by --executor only: the sweep would run
		// on this machine, and the user would think it ran on the cluster.
		return usage(errors.New("--ray-address goes with --executor ray: without it the sweep runs on this machine"))
	}
	if err := checkTheme(o.Theme); err != nil {
		return err
	}
	if o.CI && o.Theme != "" {
		return usage(errors.New("--theme goes with the sweep view, not --ci: a headless sweep draws nothing"))
	}
	if err := sweep.CheckJobs(o.Jobs); err != nil {
		return usage(sweepNamed(err, false))
	}
	if !o.CI && o.Output != "text" {
		return usage(errors.New("--output goes with --ci"))
	}
	if o.SeedSet && !o.RandomSet && o.Resume == "" {
		// Without --random every combination runs: a seed would change
		// nothing, and saying nothing would let the user think it did.
		return usage(errors.New("--seed goes with --random N: the seed of the sample; without --random every combination runs"))
	}
	if !o.CI && !components.Interactive(o.Stdout) {
		return usage(errors.New("the sweep view needs a terminal: add --ci to run the sweep headless"))
	}
	if o.Resume != "" {
		if o.Strategy != "" || len(o.Grid) > 0 || len(o.Params) > 0 || o.Constraint != "" || o.RandomSet || o.SeedSet || o.WalkForward != "" || o.Metric != "" {
			return usage(errors.New("--resume runs a sweep with its own strategy and spec: give only --jobs, --ci and --output with it"))
		}
	} else if o.Strategy == "" {
		return usage(errors.New("sweep: name the strategy file (stratbench sweep STRATEGY --grid …)"))
	}
	// The signal policy from here on: a stop signal while the sweep is set
	// up (the interpreter probed, the data loaded, the plan made, a Ray
	// cluster reached: a minute or more for a large grid or data set) ends
	// the setup, and stratbench exits 128 + n as after a stop of the runs,
	// having made no sweep folder, or with the sweep's saved as stopped
	// before its runs.
	signals := listenSignals()
	defer signals.Close()
	st := &sweepSetup{Scope: signals.BeginSetup(ctx)}
	defer st.Cancel()
	var err error
	if o.Resume != "" {
		err = resumeSweep(ctx, o, st)
	} else {
		err = startSweep(ctx, o, st)
	}
	// A signal taken during the setup ends the command with its code,
	// whatever the setup returned (signals.Policy.Setup says why), a
	// finished sweep's resume included. Once the runs have taken the
	// signals over, one still queued is theirs.
	if st.Finish(!st.ran) {
		return signals.Exit()
	}
	return err
}

// sweepSetup is what a sweep is set up with: its setup scope (ctx, which
// the first stop signal ends until end is called, and the signal policy p
// that the runs take over once end has returned: a signal taken during
// the setup is their first).
type sweepSetup struct {
	*signals.Scope
	ran bool // runSweep has taken over the signals
}

// startSweep sets up a new sweep with st and runs it.
func startSweep(ctx context.Context, o SweepOptions, st *sweepSetup) error {
	var rayc *ray.Cluster
	if o.Executor == string(sweep.ExecutorRay) {
		defer func() {
			if rayc != nil {
				rayc.Close()
			}
		}()
	}
	if !strings.HasSuffix(o.Strategy, ".py") {
		// Python would import a data file given in its place, and fail
		// on its first line.
		if info, err := os.Stat(o.Strategy); err == nil && info.IsDir() {
			return usage(fmt.Errorf("sweep: STRATEGY %s is a folder: give the strategy's .py file", o.Strategy))
		}
		return usage(fmt.Errorf("sweep: STRATEGY %q is not a Python file (.py): stratbench sweep STRATEGY.py --grid …", o.Strategy))
	}
	if o.Executor == string(sweep.ExecutorRay) {
		var err error
		if rayc, err = openRay(st.Context(), o); err != nil {
			return err
		}
	}
	strategy, _, err := local.ReadStrategy(o.Strategy)
	if err != nil {
		return inputExit(err)
	}
	jobs := o.Jobs
	if jobs == 0 && rayc == nil {
		jobs = runtime.NumCPU()
	}
	op, err := openSweepSession(st.Context(), o.RunOptions, strategy, jobs, rayc == nil)
	if err != nil {
		return err
	}
	defer op.Close()
	s, early, sd := op.Session, op.Ahead, op.Data
	f := sweep.Flags{Grid: o.Grid, Params: o.Params, Constraint: o.Constraint, Seed: o.Seed, Metric: o.Metric,
		Minimize: o.Minimize, WalkForward: o.WalkForward}
	if o.RandomSet {
		f.Random = &o.Random
	}
	sr, err := newSweep(st.Context(), o, s, sd, jobs, early.Params, func(declared map[string]any) (*sweep.Spec, error) {
		return sweep.ParseSpec(f, declared)
	}, stderrNote(o.Stderr))
	if err != nil {
		return err
	}
	sr.Starter = early.Starter() // nil with Ray
	if rayc != nil {
		if err := useRay(st.Context(), o, sr, s, rayc, jobs, o.Python); err != nil {
			return sr.Abandon(err)
		}
	}
	return runSweep(ctx, o, sr, s, st)
}

// newSweep makes a new sweep of s's strategy (local.Create: the spec made
// by parse from the MANIFEST's params, which read reads, planned, its
// folder created, its results open). A refusal is exit 2 and creates
// nothing. note tells the user that a plan takes long.
func newSweep(ctx context.Context, o SweepOptions, s *session.Session, sd *local.Data, jobs int, read local.ManifestReader,
	parse func(declared map[string]any) (*sweep.Spec, error), note func(string)) (*local.Sweep, error) {
	sw, err := local.Create(ctx, local.Setup{Strategy: s.Strategy(), Python: s.Python(), Runs: s.RunConfig(s.Python()), Data: sd, Jobs: jobs,
		JobStore: s.Store(),
		RunFlags: sweep.RunFlags{Data: o.Data, From: o.From, To: o.To, Timeframe: o.Timeframe, Cash: o.Cash, FeeBps: o.FeeBps,
			SlippageBps: o.SlippageBps, AllowShort: o.AllowShort, Sandbox: s.Sandbox()},
		Local: o.Executor != string(sweep.ExecutorRay), Read: read, Note: note, Cut: cutNote(note),
		Parse: func(declared map[string]any) (*sweep.Spec, error) {
			spec, err := parse(declared)
			if err != nil {
				return nil, asSweepExit(err)
			}
			return spec, nil
		}})
	if err != nil {
		return nil, setupExit(err)
	}
	return sw, nil
}

// setupExit maps the refusals of a sweep's setup (local.Create,
// local.Restore: bad input, a spec refused) as asSweepExit does, and
// returns any other error (the store's, a stop's) as it is.
func setupExit(err error) error {
	var ie *local.InputError
	var ue *sweep.UsageError
	if errors.As(err, &ie) || errors.As(err, &ue) {
		return asSweepExit(err)
	}
	return err
}

// cutNote tells note of a walk-forward's last fold that the end of the
// data window cuts short (local.Plan's cut).
func cutNote(note func(string)) func(sweep.Fold) {
	return func(last sweep.Fold) { note(present.CutNote(last)) }
}

// stderrNote returns a note that prints its text on w as stratbench's.
func stderrNote(w io.Writer) func(string) {
	return func(text string) { fmt.Fprintln(w, "stratbench:", text) }
}

// inputExit maps a sweep's bad input (a *local.InputError: the strategy,
// its MANIFEST, the data, the market) to exit 2, as dataError does for the
// data; other errors are returned as they are.
func inputExit(err error) error {
	var ie *local.InputError
	if errors.As(err, &ie) {
		return dataError(err)
	}
	return err
}

// asSweepExit maps the sweep package's refusals (named as the command
// line names them: sweepNamed), bad input, and a sweep.json that cannot be
// read (not a run that failed), to exit 2.
func asSweepExit(err error) error {
	var ie *local.InputError
	if errors.As(err, &ie) {
		return dataError(err)
	}
	var ue *sweep.UsageError
	if errors.As(err, &ue) || errors.Is(err, sweep.ErrUnknownSweep) {
		return usage(sweepNamed(err, false))
	}
	var de *sweep.DocumentError
	if errors.As(err, &de) {
		return usage(fmt.Errorf("%w: %s", err, present.UnreadableHint(de.ID)))
	}
	return asExit(err)
}

// runSweep ends st's setup and runs the sweep under its signal policy:
// headless with --ci, else in the sweep view. It closes the sweep's
// results when it is done.
func runSweep(ctx context.Context, o SweepOptions, sr *local.Sweep, s *session.Session, st *sweepSetup) error {
	st.End()
	st.ran = true
	if n := present.SlotsNotice(sr.Jobs, sr.RunsLeft(), sr.Slots(), runtime.NumCPU()); sr.Executor == nil && n != "" {
		fmt.Fprintln(o.Stderr, "stratbench:", n)
	}
	if o.CI {
		defer sr.Results.Close()
		return runSweepCI(ctx, o, sr, st.Policy())
	}
	return runSweepView(ctx, o, sr, s, st.Policy())
}

// runSweepCI runs the sweep headless under the signal policy and prints
// it: the first signal stops the runs in flight (on_finish runs) and saves
// the sweep as stopped, a second kills them. A first signal taken before
// (during the setup) stops the sweep before any run starts.
func runSweepCI(ctx context.Context, o SweepOptions, sr *local.Sweep, signals *signals.Policy) error {
	o.Stdout, o.Stderr = signals.WatchOutput(o.Stdout), signals.WatchOutput(o.Stderr)
	out := newSweepPrinter(o, sr.Doc, sr.Plan.Runs(len(sr.Folds)), int64(len(sr.Prior)))
	out.Begin()
	err := local.RunHeadless(ctx, sr, signals, out.Result, stderrNote(o.Stderr))
	if perr := out.Finish(); err == nil {
		err = perr
	}
	if err != nil {
		return asSweepExit(err)
	}
	if err := signals.Exit(); err != nil {
		return err // a signal, or a reader gone by the summary
	}
	if sr.Doc.Status == sweep.StatusFailed {
		return failed()
	}
	return nil
}

// openSweepSession opens a sweep's session and data
// (local.OpenSession) with newSessionWith.
func openSweepSession(ctx context.Context, o RunOptions, strategy string, jobs int, localRuns bool) (*local.Opened, error) {
	return local.OpenSession(ctx, func(before func(context.Context, *session.Session, *engine.Interpreter)) (*session.Session, error) {
		return newSessionWith(ctx, o, strategy, false, before)
	}, jobs, localRuns, o.Data, o.market())
}
