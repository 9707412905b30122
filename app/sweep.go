package app

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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"

	"stratbench/data"
	"stratbench/engine"
	"stratbench/internal/termtext"
	"stratbench/internal/units"
	"stratbench/job"
	"stratbench/sweep"
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
	if err := sweep.CheckJobs("--jobs", o.Jobs); err != nil {
		return usage(err)
	}
	if !o.CI && o.Output != "text" {
		return usage(errors.New("--output goes with --ci"))
	}
	if o.SeedSet && !o.RandomSet && o.Resume == "" {
		// Without --random every combination runs: a seed would change
		// nothing, and saying nothing would let the user think it did.
		return usage(errors.New("--seed goes with --random N: the seed of the sample; without --random every combination runs"))
	}
	if out, ok := o.Stdout.(*os.File); !o.CI && (!ok || !term.IsTerminal(out.Fd()) || !term.IsTerminal(os.Stdin.Fd())) {
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
	defer signals.close()
	st := &sweepSetup{setupScope: signals.beginSetup(ctx)}
	defer st.cancel()
	var err error
	if o.Resume != "" {
		err = resumeSweep(ctx, o, st)
	} else {
		err = startSweep(ctx, o, st)
	}
	// A signal taken during the setup ends the command with its code,
	// whatever the setup returned (signalPolicy.setup says why), a
	// finished sweep's resume included. Once the runs have taken the
	// signals over, one still queued is theirs.
	if st.finish(!st.ran) {
		return signals.exit()
	}
	return err
}

// sweepSetup is what a sweep is set up with: its setup scope (ctx, which
// the first stop signal ends until end is called, and the signal policy p
// that the runs take over once end has returned: a signal taken during
// the setup is their first).
type sweepSetup struct {
	*setupScope
	ran bool // runSweep has taken over the signals
}

// startSweep sets up a new sweep with st and runs it.
func startSweep(ctx context.Context, o SweepOptions, st *sweepSetup) error {
	var rayc *rayCluster
	if o.Executor == string(sweep.ExecutorRay) {
		defer func() {
			if rayc != nil {
				rayc.close()
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
		if rayc, err = openRay(st.ctx, o); err != nil {
			return err
		}
	}
	strategy, _, err := readStrategy(o.Strategy)
	if err != nil {
		return err
	}
	jobs := o.Jobs
	if jobs == 0 && rayc == nil {
		jobs = runtime.NumCPU()
	}
	s, early, err := openSweepSession(st.ctx, o.RunOptions, strategy, jobs, rayc == nil)
	if err != nil {
		return err
	}
	defer s.close()
	defer early.close()
	sd, err := loadSweepData(st.ctx, s)
	if err != nil {
		return err
	}
	defer sd.close()
	f := sweep.Flags{Grid: o.Grid, Params: o.Params, Constraint: o.Constraint, Seed: o.Seed, Metric: o.Metric,
		Minimize: o.Minimize, WalkForward: o.WalkForward}
	if o.RandomSet {
		f.Random = &o.Random
	}
	sr, err := newSweep(st.ctx, o, s, sd, jobs, early.params, func(declared map[string]any) (*sweep.Spec, error) {
		return sweep.ParseSpec(f, declared)
	}, stderrNote(o.Stderr))
	if err != nil {
		return err
	}
	sr.starter = early.starter // nil with Ray
	if rayc != nil {
		if err := useRay(st.ctx, o, sr, rayc, jobs, o.Python); err != nil {
			return abandonSweep(sr, err)
		}
	}
	return runSweep(ctx, o, sr, st)
}

// newSweep checks a spec (made by parse from the MANIFEST's params, which
// read reads) against the strategy as it is now, plans it and creates the
// sweep's folder, its results open. A refusal is exit 2 and creates
// nothing. note tells the user that a plan takes long (planSweep).
func newSweep(ctx context.Context, o SweepOptions, s *session, sd *sweepData, jobs int, read manifestReader,
	parse func(declared map[string]any) (*sweep.Spec, error), note func(string)) (*sweepRun, error) {
	strategy, sum, err := readStrategy(s.strategy)
	if err != nil {
		return nil, err
	}
	declared, err := read(ctx, s.python, strategy, sum)
	if err != nil {
		return nil, err
	}
	spec, err := parse(declared)
	if err != nil {
		return nil, asSweepExit(err)
	}
	folds, plan, err := planSweep(ctx, spec, sd, note)
	if err != nil {
		return nil, err
	}
	source, from, to := sd.info()
	var dataPaths []string
	for _, p := range o.Data {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, usage(err)
		}
		dataPaths = append(dataPaths, abs)
	}
	fingerprint, err := sd.fingerprint(ctx)
	if err != nil {
		return nil, usage(err)
	}
	doc := &sweep.Document{
		Status:   sweep.StatusRunning,
		Strategy: sweep.StrategyRef{Path: strategy, SHA256: sum},
		Data:     sweep.DataRef{Source: source, From: from, To: to, Fingerprint: fingerprint},
		Spec:     spec.Doc(),
		Executor: sweep.Executor{Kind: sweep.ExecutorLocal},
		RunFlags: &sweep.RunFlags{Data: dataPaths, From: o.From, To: o.To, Timeframe: o.Timeframe, Cash: o.Cash, FeeBps: o.FeeBps,
			SlippageBps: o.SlippageBps, AllowShort: o.AllowShort, Python: s.python.Executable, Sandbox: s.sandbox},
	}
	if o.Executor != string(sweep.ExecutorRay) {
		doc.RunFlags.PythonVersion = s.python.Version
	}
	doc.Spec.Jobs = jobs
	store, err := sweep.OpenStore(s.store.Home())
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
	return &sweepRun{sess: s, data: sd, store: store, doc: doc, spec: spec, plan: plan, folds: folds,
		results: results, jobs: jobs}, nil
}

// resumeSweep runs what a sweep has no result for, with the flags it
// started with; it refuses a strategy or data that changed since.
// With --executor ray it reaches the cluster only when the sweep has runs
// left: a finished sweep resumes to nothing, without it.
func resumeSweep(ctx context.Context, o SweepOptions, st *sweepSetup) error {
	onRay := o.Executor == string(sweep.ExecutorRay)
	home, err := job.DefaultHome()
	if err != nil {
		return err
	}
	store, err := sweep.OpenStore(home)
	if err != nil {
		return err
	}
	id, err := storeSweepID(store, o.Resume)
	if err != nil {
		return fmt.Errorf("--resume: %w", err)
	}
	// The results' lock first, the document after it: a document read
	// before could be one that another resume, finishing the sweep in
	// between, has since rewritten, and this one would save its stale copy
	// over it. Held from here, the lock makes any other resume (or a
	// `status`) see the sweep running.
	results, rb, err := store.OpenResults(id)
	if errors.Is(err, sweep.ErrBusy) {
		return usage(fmt.Errorf("--resume %s: %w", id, sweep.ErrBusy)) // err names the id again
	}
	if err != nil {
		return err
	}
	defer results.Close() // runSweep closes them too: a second Close does nothing
	doc, err := stoppable(st.ctx, func() (*sweep.Document, error) { return store.Load(id) })
	if err != nil {
		return asSweepExit(err)
	}
	if doc.RunFlags == nil {
		return usage(fmt.Errorf("--resume %s: the sweep's document does not record its run flags: it cannot be resumed", id))
	}
	rf := doc.RunFlags
	docPath := filepath.Join(store.Dir(id), sweep.DocumentFile)
	for _, f := range []struct{ field, value string }{{"run_flags.from", rf.From}, {"run_flags.to", rf.To}} {
		if f.value == "" {
			continue
		}
		if _, err := data.ParseTime(f.value); err != nil {
			// Named as the document's field: the user gave no --from.
			return usage(fmt.Errorf("--resume %s: %s: %s: %w", id, docPath, f.field, err))
		}
	}
	ro := o.RunOptions
	ro.Strategy, ro.Data, ro.From, ro.To, ro.Timeframe = doc.Strategy.Path, rf.Data, rf.From, rf.To, rf.Timeframe
	ro.Cash, ro.FeeBps, ro.SlippageBps, ro.AllowShort = rf.Cash, rf.FeeBps, rf.SlippageBps, rf.AllowShort
	ro.Python, ro.Sandbox, ro.Params = rf.Python, rf.Sandbox, nil
	strategy, sum, err := readStrategy(ro.Strategy)
	if err != nil {
		return err
	}
	jobs := doc.Spec.Jobs
	if o.Jobs > 0 || onRay {
		jobs = o.Jobs
	} else if err := sweep.CheckJobs("spec.jobs", jobs); err != nil {
		// The document's own count, edited (or of a cluster larger than
		// a local pool takes): refused as --jobs would be.
		return usage(fmt.Errorf("--resume %s: %s: %w (--jobs N runs it on N slots instead)", id, docPath, err))
	}
	if jobs < 1 && !onRay {
		jobs = runtime.NumCPU()
	}
	s, early, err := openSweepSession(st.ctx, ro, strategy, jobs, !onRay)
	if err != nil {
		return withRunFlags(id, docPath, err)
	}
	defer s.close()
	defer early.close()
	sd, err := loadSweepData(st.ctx, s)
	if err != nil {
		return withRunFlags(id, docPath, err)
	}
	defer sd.close()
	fingerprint, err := sd.fingerprint(st.ctx)
	if err != nil {
		return usage(err)
	}
	if err := sweep.CheckResume(doc, sum, fingerprint); err != nil {
		return asSweepExit(err)
	}
	// Runs that ran here and will run here: their interpreter's version
	// must not have changed.
	localAgain := !onRay && doc.Executor.Kind == sweep.ExecutorLocal
	if localAgain {
		if err := checkResumePython(s, doc); err != nil {
			return err
		}
	}
	if err := st.ctx.Err(); err != nil {
		return err // a stop signal during the setup
	}
	if doc.Status == sweep.StatusPassed || doc.Status == sweep.StatusFailed {
		// Every run has its result: nothing runs, and the document (its
		// timing included) is left as it is. (The strategy and the data
		// were checked all the same: a resume refuses a change, docs/sweeps.md.)
		fmt.Fprintf(o.Stderr, "stratbench: sweep %s has finished (%s): every run has its result, nothing to resume "+
			"(`stratbench sweep view %s` opens it in the sweep view)\n", id, doc.Status, id)
		if err := newSweepPrinter(o, doc, doc.Counts.Total, doc.Counts.Done).finish(); err != nil {
			return err
		}
		if doc.Status == sweep.StatusFailed {
			return failed()
		}
		return nil
	}
	var rayc *rayCluster
	if onRay {
		if rayc, err = openRay(st.ctx, o); err != nil {
			return err
		}
		defer rayc.close()
	}
	if localAgain && doc.RunFlags.PythonVersion == "" && s.python != nil {
		// A document of an older stratbench: the version checkResumePython
		// found the same is recorded, and the next resume checks against it.
		doc.RunFlags.PythonVersion = s.python.Version
	}
	doc.Resume(time.Now())
	declared, err := early.params(st.ctx, s.python, strategy, sum)
	if err != nil {
		return err
	}
	spec, err := stoppable(st.ctx, func() (*sweep.Spec, error) { return sweep.RestoreSpec(doc.Spec, declared) })
	if err != nil {
		return asSweepExit(inDocument(id, docPath, err))
	}
	folds, plan, err := planSweep(st.ctx, spec, sd, stderrNote(o.Stderr))
	if err != nil {
		return inDocument(id, docPath, err)
	}
	// Before anything runs or is written: kept results that are not runs
	// of this plan (a spec or results.jsonl edited by hand) would stand
	// for runs they are not.
	if err := sweep.CheckPrior(doc, filepath.Join(store.Dir(id), sweep.ResultsFile), spec, plan, folds, rb.Results); err != nil {
		return asSweepExit(err)
	}
	if rb.Note != "" {
		fmt.Fprintln(o.Stderr, "stratbench:", rb.Note)
	}
	doc.Spec.Jobs = jobs
	o.RunOptions = ro
	sr := &sweepRun{sess: s, data: sd, store: store, doc: doc, spec: spec, plan: plan, folds: folds,
		results: results, prior: rb.Results, jobs: jobs, starter: early.starter}
	if rayc != nil {
		if err := useRay(st.ctx, o, sr, rayc, jobs, ""); err != nil {
			return abandonSweep(sr, err)
		}
	} else {
		doc.Executor.Kind = sweep.ExecutorLocal
	}
	return runSweep(ctx, o, sr, st)
}

// stoppable runs f, a step of a sweep's setup that does not look at ctx
// (it decodes or checks what a sweep holds: seconds for a sweep of a
// million combinations, whose sweep.json is 16 MB), so that a stop signal
// meanwhile is answered at once: when ctx ends first, stoppable returns
// ctx's error and leaves f to end on its own, its result dropped. f must
// only compute (take no lock, leave nothing open, write nothing): the
// command ends right after.
func stoppable[T any](ctx context.Context, f func() (T, error)) (T, error) {
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

// readStrategy resolves the strategy file as a run does (absolute, through
// symlinks) and returns its path and content hash. The path may come from
// a sweep's document (a resume, prune): anything but a regular file (a
// FIFO, /dev/zero) is refused before it is read, and the content is hashed
// as it streams, never held whole.
func readStrategy(arg string) (path, sum string, err error) {
	path, err = filepath.Abs(arg)
	if err != nil {
		return "", "", usage(fmt.Errorf("strategy: %w", err))
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	// O_NONBLOCK: the open of a FIFO does not wait for its writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", "", usage(fmt.Errorf("strategy: %w", err))
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		if err == nil {
			err = fmt.Errorf("%s is not a regular file", path)
		}
		return "", "", usage(fmt.Errorf("strategy: %w", err))
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", "", usage(fmt.Errorf("strategy: %w", err))
	}
	return path, hex.EncodeToString(h.Sum(nil)), nil
}

// planSweep tiles the data into walk-forward folds (none for a plain
// sweep) and plans the combinations. A plan that keeps no combination is
// refused.
func planSweep(ctx context.Context, spec *sweep.Spec, sd *sweepData, note func(string)) ([]sweep.Fold, *sweep.Plan, error) {
	var folds []sweep.Fold
	if wf := spec.WalkForward(); wf != nil {
		var err error
		bars, err := sd.bars(ctx)
		if err != nil {
			return nil, nil, err
		}
		if folds, err = spec.Folds(bars, sd.sess.window.From, sd.sess.window.To); err != nil {
			return nil, nil, asSweepExit(err)
		}
		if err := sd.checkFoldWindows(ctx, spec.WindowCheck(folds)); err != nil {
			return nil, nil, asSweepExit(err)
		}
		if last := folds[len(folds)-1]; last.Test.Duration() < wf.Test/10 {
			// Legal, and seldom meant: a bare date as --to is that day's
			// first instant, so the last fold tests on a sliver of it.
			note(fmt.Sprintf("walk-forward: fold %d's test window %s is cut to %s by the end of the data window "+
				"(--to is inclusive: a bare date is that day's midnight); its out-of-sample metrics count as any fold's",
				last.Index, last.Test, last.Test.Duration()))
		}
	}
	plan, err := planTelling(ctx, spec, note)
	if err != nil {
		return nil, nil, asSweepExit(err)
	}
	if plan.Len() == 0 {
		doc := spec.Doc()
		c := ""
		if doc.Constraint != nil {
			c = *doc.Constraint
		}
		return nil, nil, usage(&sweep.UsageError{Flag: spec.Label("--constraint"), Arg: c, Reason: "keeps none of the " + strconv.FormatInt(spec.Size(), 10) + " combinations"})
	}
	return folds, plan, nil
}

// planNoteAfter is how long a plan may take before the sweep says that it
// is planning. A constraint is tried on every combination of the grid, and
// a --random sample draws a key for each: at the grid's most (a billion
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

// stderrNote returns a note that prints its text on w as stratbench's.
func stderrNote(w io.Writer) func(string) {
	return func(text string) { fmt.Fprintln(w, "stratbench:", text) }
}

// checkResumePython refuses (exit 2) a local resume whose interpreter is
// now another Python version than the sweep's runs ran: the version
// stratbench's own probe found when the sweep started (RunFlags.
// PythonVersion), against its probe now. A document of an older version
// has none: then the version a kept run's report records, which its
// worker reported (the only word there is).
func checkResumePython(s *session, doc *sweep.Document) error {
	if s.python == nil {
		return nil
	}
	ran, how := doc.RunFlags.PythonVersion, "when the sweep started"
	if ran == "" {
		for _, r := range doc.Runs {
			if r.JobID == "" {
				continue
			}
			if rep, err := s.store.Load(r.JobID); err == nil && rep.Python.Version != "" {
				ran, how = rep.Python.Version, "as job "+r.JobID+" reported"
				break
			}
		}
	}
	if ran == "" || ran == s.python.Version {
		return nil
	}
	what := "--python " + doc.RunFlags.Python
	if doc.RunFlags.Python == "" {
		what = "the interpreter it finds ($STRATBENCH_PYTHON, $VIRTUAL_ENV, python3)"
	}
	return usage(fmt.Errorf("--resume %s: the sweep's runs ran Python %s (%s), and %s is now Python %s (%s): "+
		"the runs would not be comparable; start a new sweep", doc.SweepID, ran, how, what, s.python.Version, s.python.Executable))
}

// inDocument names sweep id's sweep.json (docPath) in a refusal of a
// value read from it (a *sweep.UsageError naming a field of the document,
// as a restored spec's do), which would otherwise read as a flag the user
// never gave. Other errors are returned as they are.
func inDocument(id, docPath string, err error) error {
	var ue *sweep.UsageError
	if !errors.As(err, &ue) || !strings.HasPrefix(ue.Flag, "spec.") {
		return err
	}
	return fmt.Errorf("--resume %s: %s: %w", id, docPath, err)
}

// withRunFlags says that a resume's bad input (exit 2) comes from the run
// flags sweep id's document (docPath) records, which the session and the
// data were opened with: its message names the flag (--python, --data),
// which the user of a resume did not give.
func withRunFlags(id, docPath string, err error) error {
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitUsage {
		return err
	}
	return fmt.Errorf("--resume %s: with the run flags %s records (run_flags): %w", id, docPath, err)
}

// asSweepExit maps the sweep package's refusals, and a sweep.json that
// cannot be read (bad input, not a run that failed), to exit 2.
func asSweepExit(err error) error {
	var ue *sweep.UsageError
	if errors.As(err, &ue) || errors.Is(err, sweep.ErrUnknownSweep) {
		return usage(err)
	}
	var de *sweep.DocumentError
	if errors.As(err, &de) {
		return usage(fmt.Errorf("%w: %s", err, unreadableHint(de)))
	}
	return asExit(err)
}

// unreadableHint says what a sweep whose sweep.json cannot be read is,
// and what to do with it.
func unreadableHint(de *sweep.DocumentError) string {
	return fmt.Sprintf("it was cut short or edited by hand, and the sweep can be neither shown nor resumed "+
		"(its results are in %s beside it): start a new sweep; `stratbench prune --sweep %s` removes this one",
		sweep.ResultsFile, de.ID)
}

// sweepRun is a sweep ready to run: its session, data, folder and plan.
type sweepRun struct {
	sess    *session
	data    *sweepData
	store   *sweep.Store
	doc     *sweep.Document
	spec    *sweep.Spec
	plan    *sweep.Plan
	folds   []sweep.Fold
	results *sweep.Results
	prior   []sweep.Result
	jobs    int
	// executor runs the items; nil is the local pool of jobs slots.
	executor sweep.RunExecutor
	// starter, when set, starts the local runs (its templates started
	// ahead by Sweep); nil: runner makes one. The runner's done closes it.
	starter jobStarter
}

// runSweep ends st's setup and runs the sweep under its signal policy:
// headless with --ci, else in the sweep view. It closes the sweep's
// results when it is done.
func runSweep(ctx context.Context, o SweepOptions, sr *sweepRun, st *sweepSetup) error {
	st.end()
	st.ran = true
	if n := sr.slotsNotice(); n != "" {
		fmt.Fprintln(o.Stderr, "stratbench:", n)
	}
	if o.CI {
		defer sr.results.Close()
		return runSweepCI(ctx, o, sr, st.p)
	}
	return runSweepView(ctx, o, sr, st.p)
}

// runner returns the sweep's runner, its runs on a pool of --jobs slots
// (or on the sweep's own executor, a Ray cluster), and what to call once it
// has run: it ends the slots' workers and returns what the sweep tells the
// user of how its runs started (none, one line each): why they started
// cold (an interpreter each instead of a fork of a warm template), and
// which jobs were lost with their template and started again.
func (sr *sweepRun) runner() (*sweep.Runner, func() (notices []string)) {
	if sr.executor != nil {
		return &sweep.Runner{Store: sr.store, Doc: sr.doc, Spec: sr.spec, Plan: sr.plan, Folds: sr.folds,
			Results: sr.results, Prior: sr.prior, Executor: sr.executor}, func() []string { return nil }
	}
	env := threadEnv(sr.jobs)
	jobs := sr.starter
	if jobs == nil {
		jobs = newJobStarter(sweepJobConfig(sr.sess, sr.sess.python, sr.jobs), sr.jobs)
	}
	lost := &lostJobs{}
	r := &sweep.Runner{
		Store: sr.store, Doc: sr.doc, Spec: sr.spec, Plan: sr.plan, Folds: sr.folds,
		Results: sr.results, Prior: sr.prior,
		Executor: &sweep.Pool{Slots: sr.slots(), Starter: &runStarter{start: jobs.Start, sess: sr.sess, data: sr.data,
			sweepID: sr.doc.SweepID, sha256: sr.doc.Strategy.SHA256, env: env, lost: lost}},
	}
	return r, func() []string {
		var notices []string
		if n := lost.notice(); n != "" {
			notices = append(notices, n)
		}
		if why := jobs.ColdReason(); why != "" {
			notices = append(notices, coldNotice(why))
		}
		jobs.Close()
		return notices
	}
}

// slots is how many runs the local pool runs at once: --jobs, never more
// than the runs left nor than sweep.LocalSlotsPerCPU a CPU (the templates
// are bounded by the CPUs: engine.NewPool).
func (sr *sweepRun) slots() int {
	return sweep.Slots(sr.jobs, sr.runsLeft(), runtime.NumCPU())
}

// runsLeft is how many runs the sweep has no result for.
func (sr *sweepRun) runsLeft() int64 {
	return sr.plan.Runs(len(sr.folds)) - int64(len(sr.prior))
}

// slotsNotice says, when the machine bounds the local runs at once below
// --jobs (and the runs left), how many run at once; "" otherwise.
func (sr *sweepRun) slotsNotice() string {
	if sr.executor != nil {
		return "" // a cluster's slots are the cluster's
	}
	if asked := min(int64(sr.jobs), sr.runsLeft()); int64(sr.slots()) < asked {
		return fmt.Sprintf("--jobs %d: this machine runs at most %d runs at once (%d a CPU, %s); the sweep runs on %d slots",
			sr.jobs, sr.slots(), sweep.LocalSlotsPerCPU, counted(runtime.NumCPU(), "CPU", "CPUs"), sr.slots())
	}
	return ""
}

// coldNotice is what a sweep says when its runs started cold, on one line
// with no control characters: why may quote a template's output.
func coldNotice(why string) string {
	return termtext.Line("this sweep's runs started cold, an interpreter each: " + why)
}

// runSweepCI runs the sweep headless under the signal policy and prints
// it: the first signal stops the runs in flight (on_finish runs) and saves
// the sweep as stopped, a second kills them. A first signal taken before
// (during the setup) stops the sweep before any run starts.
func runSweepCI(ctx context.Context, o SweepOptions, sr *sweepRun, signals *signalPolicy) error {
	ctx, kill := context.WithCancel(ctx)
	defer kill()
	o.Stdout, o.Stderr = signals.watchOutput(o.Stdout), signals.watchOutput(o.Stderr)
	stop := make(chan struct{})
	if signals.stopped() {
		close(stop)
	}
	endSignals := signals.serve(func() { close(stop) }, kill)
	defer endSignals()
	out := newSweepPrinter(o, sr.doc, sr.plan.Runs(len(sr.folds)), int64(len(sr.prior)))
	out.begin()
	runner, done := sr.runner()
	runner.OnResult = out.result
	err := runner.Run(ctx, stop)
	for _, notice := range done() {
		fmt.Fprintln(o.Stderr, "stratbench:", notice)
	}
	endSignals()
	if perr := out.finish(); err == nil {
		err = perr
	}
	if err != nil {
		return asSweepExit(err)
	}
	if err := signals.exit(); err != nil {
		return err // a signal, or a reader gone by the summary
	}
	if sr.doc.Status == sweep.StatusFailed {
		return failed()
	}
	return nil
}

// openSweepSession makes a sweep's session, with what the sweep needs
// started while the interpreter is probed (earlyStarter): the templates of
// its local runs (early.starter, nil when they are not local: Ray) and
// the MANIFEST read (early.params). The caller closes both; the sweep's
// runner closes the starter first when it is done.
func openSweepSession(ctx context.Context, o RunOptions, strategy string, jobs int, local bool) (*session, *earlyStarter, error) {
	early := &earlyStarter{jobs: jobs, off: !local}
	s, err := newSessionWith(ctx, o, strategy, early.start)
	if err != nil {
		early.close()
		return nil, nil, err
	}
	early.settle(s)
	return s, early, nil
}

// earlyStarter starts what a sweep needs as soon as the interpreter's path
// is known (newSessionWith's beforeProbe: start), so that it runs while the
// interpreter is probed and the data loads: the templates of its local
// runs (they run nothing of the strategy's folder) and the MANIFEST read
// (which runs none of the strategy's code). Both are of the interpreter at
// that path; settle replaces the templates, and params reads again, when
// the probe names another interpreter (a launcher that is a program; for a
// script, such as a pyenv shim, nothing starts ahead).
type earlyStarter struct {
	jobs int  // the sweep's slots
	off  bool // the runs are not local (Ray): no template
	// path is the interpreter start started with, "" when it started
	// nothing (a script).
	path string
	// starter is the runs' starter (with the templates of path until
	// settle), nil before start and when the runs are not local.
	starter jobStarter
	// manifest is the MANIFEST read start began, with path; nil if none.
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

// start is newSessionWith's beforeProbe. It starts nothing for a script
// (a pyenv shim): the probe will name the interpreter the script runs, and
// what was started with the script would be replaced after paying its
// start.
func (e *earlyStarter) start(ctx context.Context, s *session, py *engine.Interpreter) {
	python := py.Executable
	if engine.IsScript(python) {
		return
	}
	e.path = python
	m := &manifestAhead{done: make(chan struct{})}
	e.manifest = m
	strategy := s.strategy
	// The goroutine's owner is e: close waits for it. readManifestParams
	// is bounded by ctx and manifestTimeout.
	go func() {
		defer close(m.done)
		_, before, err := readStrategy(strategy)
		if err != nil {
			m.err = err
			return
		}
		m.params, m.err = readManifestParams(ctx, py, strategy)
		if _, after, err := readStrategy(strategy); err == nil && after == before {
			m.sum = before
		}
	}()
	if e.off {
		return
	}
	e.starter = newJobStarter(sweepJobConfig(s, py, e.jobs), e.jobs)
	e.starter.Warm()
}

// settle makes e.starter the starter of the sweep's local runs, their
// templates started, or leaves it nil when they are not local.
func (e *earlyStarter) settle(s *session) {
	if e.off {
		return
	}
	if e.starter != nil && e.path != s.python.Executable {
		e.starter.Close()
		e.starter = nil
	}
	if e.starter == nil {
		e.starter = newJobStarter(sweepJobConfig(s, s.python, e.jobs), e.jobs)
		e.starter.Warm()
	}
}

// params is a manifestReader: the MANIFEST read ahead when it read the
// content whose hash is sum with py, else a read now.
func (e *earlyStarter) params(ctx context.Context, py *engine.Interpreter, strategy, sum string) (map[string]any, error) {
	if m := e.manifest; m != nil {
		select {
		case <-m.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if m.err == nil && e.path == py.Executable && m.sum == sum {
			return m.params, nil
		}
	}
	return readManifestParams(ctx, py, strategy)
}

// close closes the starter (a second Close does nothing) and waits for the
// MANIFEST read started ahead.
func (e *earlyStarter) close() {
	if e.starter != nil {
		e.starter.Close()
	}
	if e.manifest != nil {
		<-e.manifest.done
	}
}

// sweepJobConfig is the Config a sweep's local runs share (each adds its
// params and its sweep tag).
func sweepJobConfig(s *session, py *engine.Interpreter, jobs int) engine.Config {
	return engine.Config{Strategy: s.strategy, Python: py, Home: s.store.Home(), Limits: job.DefaultLimits(),
		Sandbox: s.sandbox, Version: Version, Host: s.host, Env: threadEnv(jobs)}
}

// threadEnv keeps a sweep's runs from oversubscribing the machine: with
// several runs at once, each worker's BLAS and OpenMP pools (numpy's) get
// an equal share of the CPUs instead of every CPU each. One run at a time
// keeps the environment of a --ci run.
func threadEnv(jobs int) map[string]string {
	if jobs <= 1 {
		return nil
	}
	n := strconv.Itoa(max(1, runtime.NumCPU()/jobs))
	return map[string]string{"OMP_NUM_THREADS": n, "OPENBLAS_NUM_THREADS": n, "MKL_NUM_THREADS": n, "NUMEXPR_NUM_THREADS": n}
}
