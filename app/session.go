package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"stratbench/backtest"
	"stratbench/data"
	"stratbench/engine"
	"stratbench/internal/signals"
	"stratbench/job"
	"stratbench/python"
	"stratbench/sandbox"
	"stratbench/supervisor"
	"stratbench/watch"
)

// session holds what every run of one stratbench invocation shares: the
// supervisor's host, the interpreter, the job store and the data.
type session struct {
	opts     RunOptions
	host     *supervisor.Host
	python   *engine.Interpreter
	store    *job.Store
	window   data.Window
	budget   int64      // data.Options.Budget, from STRATBENCH_DATA_BUDGET
	spill    int64      // data.Options.SpillBudget, from STRATBENCH_SPILL_BUDGET
	keep     job.Budget // the home's retention budget, from STRATBENCH_KEEP
	sandbox  bool
	strategy string
	// limits are the runs' limits; zero: job.DefaultLimits (tests set
	// shorter ones, as the Go API allows).
	limits job.Limits

	dataMu  sync.Mutex
	data    *data.Set // opened by the first run, again when its files change
	retired *data.Set // the set data replaced, closed when it is replaced in turn
	// fresh: data was opened by the setup and no run has had it yet; the
	// first run takes it as it is (its files may look changed: a file
	// written within two seconds of its opening is not taken as unchanged
	// by Stale, and opening the data again would hold it twice).
	fresh bool

	// pool, when set (keepWarm), starts the session's runs from a warm
	// template instead of an interpreter each.
	pool *engine.Pool

	// shown is the job of the session's latest run, whose folder stays
	// held (engine.Config.Hold) while the command uses it: --ci prints
	// it and writes its report, the workbench shows it. The next run
	// replaces it; close lets it go.
	shownMu sync.Mutex
	shown   *engine.Job
}

func newSession(ctx context.Context, o RunOptions, strategy string) (*session, error) {
	return newSessionWith(ctx, o, strategy, nil)
}

// openSession opens the session for strategy under a new signal policy,
// listening from before the setup (signals.Policy.Setup: a stop signal while
// the interpreter is probed or the data loads ends the command with
// 128 + n, no job made). The caller closes both, the session first; on an
// error there is neither to close.
func openSession(ctx context.Context, o RunOptions, strategy string) (*session, *signals.Policy, error) {
	signals := listenSignals()
	var s *session
	err := signals.Setup(ctx, func(ctx context.Context) (err error) {
		s, err = newSession(ctx, o, strategy)
		return err
	})
	if err != nil {
		if s != nil {
			s.close()
		}
		signals.Close()
		return nil, nil, err
	}
	return s, signals, nil
}

// newSessionWith is newSession that calls beforeProbe, when it is not nil,
// once the session has its host, store and sandbox and before the
// interpreter is probed, with ctx and the interpreter as far as it is known
// then: all of it when the probe's answer was kept from an earlier start
// (engine.CachedPython: then nothing is probed), else only the path the
// probe will run (engine.PythonPath; the probe's Executable may differ).
// s.python is nil then. A caller starts there what needs only the
// interpreter, so that it runs while the probe does; beforeProbe is not
// called when the interpreter cannot be found.
func newSessionWith(ctx context.Context, o RunOptions, strategy string, beforeProbe func(ctx context.Context, s *session, py *engine.Interpreter)) (*session, error) {
	// First: no descriptor stratbench inherited may reach a child, the
	// interpreter probe included.
	host, err := supervisor.NewHost()
	if err != nil {
		return nil, err
	}
	store, err := openStore(o.Stderr)
	if err != nil {
		return nil, err
	}
	window, err := data.ParseWindow(o.From, o.To)
	if err != nil {
		return nil, o.flagNames().input(err)
	}
	budget, err := dataBudget()
	if err != nil {
		return nil, usage(err)
	}
	spill, err := spillBudget()
	if err != nil {
		return nil, usage(err)
	}
	keep, err := keepBudget()
	if err != nil {
		return nil, err
	}
	s := &session{opts: o, store: store, window: window, budget: budget, spill: spill, keep: keep, strategy: strategy}
	required, err := sandboxRequired()
	if err != nil {
		return nil, usage(err)
	}
	s.sandbox = o.Sandbox || required
	if s.sandbox {
		if err := sandbox.Check(); err != nil {
			return nil, usage(fmt.Errorf("refusing to run: %w", err))
		}
	}
	s.host = host
	cacheDir := engine.DefaultCacheDir(store.Home())
	cached, _ := engine.CachedPython(o.Python, cacheDir)
	if beforeProbe != nil {
		if cached != nil {
			beforeProbe(ctx, s, cached)
		} else if path, err := engine.PythonPath(o.Python); err == nil {
			beforeProbe(ctx, s, &engine.Interpreter{Executable: path})
		}
	}
	// Bad data is bad input: refuse before anything runs. The data loads
	// while the interpreter is probed (a pyenv shim alone takes a third of
	// a second).
	loaded := make(chan error, 1)
	go func() {
		_, err := s.driver(ctx)
		if err == nil {
			s.dataMu.Lock()
			s.fresh = true // the first run takes the set as it is
			s.dataMu.Unlock()
		}
		loaded <- err
	}()
	py, err := cached, error(nil)
	if py == nil {
		py, err = engine.FindPythonCached(ctx, o.Python, cacheDir)
	}
	var dataErr error
	select {
	case dataErr = <-loaded:
	case <-ctx.Done():
		// A stop signal: the setup ends now, also when the loader is
		// where ctx cannot reach (a read of a file on a hung file
		// system). The loader closes what it opened when it returns.
		go func() {
			<-loaded
			s.close()
		}()
		return nil, ctx.Err()
	}
	if err != nil {
		s.close()
		return nil, usage(err)
	}
	if dataErr != nil {
		s.close()
		return nil, dataErr
	}
	s.python = py
	return s, nil
}

// sandboxRequired reads STRATBENCH_PYTHON_SANDBOX: "required" forces the
// sandbox, whatever the flags say; any other non-empty value is refused
// rather than silently running unsandboxed.
func sandboxRequired() (bool, error) {
	switch v := os.Getenv("STRATBENCH_PYTHON_SANDBOX"); strings.ToLower(strings.TrimSpace(v)) {
	case "":
		return false, nil
	case "required":
		return true, nil
	default:
		return false, fmt.Errorf("STRATBENCH_PYTHON_SANDBOX=%q: the only value is \"required\"", v)
	}
}

// dataBudget reads STRATBENCH_DATA_BUDGET: the MiB of decoded bars data
// may take to be decoded once and replayed from memory (more streams from
// the files on every run); 0 streams everything. Unset, the data
// package's default (64 MiB).
func dataBudget() (int64, error) {
	v := strings.TrimSpace(os.Getenv("STRATBENCH_DATA_BUDGET"))
	if v == "" {
		return 0, nil
	}
	mib, err := strconv.ParseInt(v, 10, 64)
	if err != nil || mib < 0 || mib > 1<<30 {
		return 0, fmt.Errorf("STRATBENCH_DATA_BUDGET=%q: want a whole number of MiB, 0 to stream everything", v)
	}
	if mib == 0 {
		return -1, nil
	}
	return mib << 20, nil
}

// spillBudget reads STRATBENCH_SPILL_BUDGET: the MiB that data too large
// for the memory of its streams may take spilled to $TMPDIR. Unset, the
// data package's default (16 GiB).
func spillBudget() (int64, error) {
	v := strings.TrimSpace(os.Getenv("STRATBENCH_SPILL_BUDGET"))
	if v == "" {
		return 0, nil
	}
	mib, err := strconv.ParseInt(v, 10, 64)
	if err != nil || mib < 1 || mib > 1<<30 {
		return 0, fmt.Errorf("STRATBENCH_SPILL_BUDGET=%q: want a whole number of MiB, 1 or more", v)
	}
	return mib << 20, nil
}

// driver returns a fresh market on the session's data.
func (s *session) driver(ctx context.Context) (*backtest.Driver, error) {
	set, err := s.dataSet(ctx)
	if err != nil {
		return nil, err
	}
	d, err := backtest.NewDriver(set, s.opts.market())
	if err != nil {
		return nil, s.opts.flagNames().input(err)
	}
	return d, nil
}

// dataSet returns the session's data: --data (files, folders) or the
// bundled sample, inside the window. It is opened once and again only
// when its files changed (data.Set.Stale): watch mode re-runs on the same
// data without reading it again when it fits the decode budget, and
// streams it again when it does not. Bad data is bad input (exit 2). Runs
// that replay at once (a sweep's) share one set: take it once and build
// each run's driver on it (backtest.NewDriver), so that a file changed
// during the sweep cannot give its runs different data.
func (s *session) dataSet(ctx context.Context) (*data.Set, error) {
	s.dataMu.Lock()
	defer s.dataMu.Unlock()
	if s.data != nil && (s.fresh || !s.data.Stale()) {
		s.fresh = false
		return s.data, nil
	}
	var set *data.Set
	var err error
	if len(s.opts.Data) == 0 {
		set, err = data.Sample(s.window)
	} else {
		set, err = data.Open(ctx, s.opts.Data, data.Options{Window: s.window, Budget: s.budget, SpillBudget: s.spill, Timeframe: s.opts.Timeframe})
	}
	if err != nil {
		return nil, s.opts.flagNames().input(err)
	}
	// A run may still be reading the set this one replaces (a run stopped
	// for a save ends after the next has opened its data): it is closed
	// one replacement later, when no run reads it any more.
	if s.retired != nil {
		s.retired.Close()
	}
	s.retired, s.data = s.data, set
	return set, nil
}

// keepWarm makes the session's runs start from a warm template, as a
// sweep's do (engine.Pool, one slot): for the workbench and --ci --watch,
// which run the strategy again at every save. The template starts now, in
// the background; it imports the bridge and the strategy's leading
// third-party imports, never a module of the strategy's folder, and each
// run forked from it is a tree of its own with its own limits and fresh
// module state, or the run starts cold (engine.Pool says when: always
// under the sandbox). refreshOn replaces a template whose imports are no
// longer the strategy's.
func (s *session) keepWarm() {
	pool, err := engine.NewPool(s.jobConfig(), 1)
	if err != nil {
		return // each run's engine.Start says what is wrong
	}
	s.pool = pool
	pool.Warm()
}

// refreshOn passes changes on, and has the session's template checked at
// each change of the strategy (engine.Pool.Refresh): one whose leading
// imports are no longer the strategy's is replaced in the background,
// while the run in flight stops, and the next run waits for the new one.
// Without a warm template it returns changes. The goroutine it starts
// ends when changes is closed (it closes its own channel then) or ctx
// ends.
func (s *session) refreshOn(ctx context.Context, changes <-chan watch.Change) <-chan watch.Change {
	if s.pool == nil {
		return changes
	}
	out := make(chan watch.Change)
	go func() {
		defer close(out)
		for {
			var ch watch.Change
			var ok bool
			select {
			case ch, ok = <-changes:
			case <-ctx.Done():
				return
			}
			if !ok {
				return
			}
			if ch.Kind == watch.Changed {
				s.pool.Refresh()
			}
			select {
			case out <- ch:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// close ends the session's template (once its runs have ended) and
// releases its data files.
func (s *session) close() {
	if s.pool != nil {
		s.pool.Close()
	}
	s.show(nil)
	s.dataMu.Lock()
	defer s.dataMu.Unlock()
	for _, set := range []*data.Set{s.data, s.retired} {
		if set != nil {
			set.Close()
		}
	}
	s.data, s.retired = nil, nil
}

// start starts one job on the strategy's current content: breakpoint()
// there writes a notice and goes on.
func (s *session) start(ctx context.Context) (*engine.Job, error) { return s.startWith(ctx, nil) }

// startWith starts one job on the strategy's current content, with the
// workbench's debugger when debug is not nil.
func (s *session) startWith(ctx context.Context, debug *engine.Debug) (*engine.Job, error) {
	d, err := s.driver(ctx)
	if err != nil {
		return nil, err
	}
	cfg := s.jobConfig()
	cfg.Debug = debug
	var j *engine.Job
	if s.pool != nil {
		j, err = s.pool.Start(ctx, cfg, d)
	} else {
		j, err = engine.Start(ctx, cfg, d)
	}
	if err != nil {
		return nil, err
	}
	s.show(j)
	return j, nil
}

// show makes j the session's latest run: the one before is no longer
// used once its run ends (nil: none is).
func (s *session) show(j *engine.Job) {
	s.shownMu.Lock()
	old := s.shown
	s.shown = j
	s.shownMu.Unlock()
	if old != nil {
		old.Release()
	}
}

// jobConfig is the Config of the session's runs.
func (s *session) jobConfig() engine.Config {
	limits := s.limits
	if limits == (job.Limits{}) {
		limits = job.DefaultLimits()
	}
	return engine.Config{
		Strategy: s.strategy,
		Python:   s.python,
		Params:   s.opts.Params,
		Home:     s.store.Home(),
		Limits:   limits,
		Sandbox:  s.sandbox,
		Version:  Version,
		Host:     s.host,
		// The home's budget, once each run has ended.
		Ended: func(id string) { retain(s.store, s.keep, id) },
		Hold:  true,
	}
}

// resolveStrategy picks the strategy file: the argument, ./strategy.py, or
// the bundled example written to a workspace folder (kept across runs, so
// edits survive). It returns the path and the workspace folder, if used.
func resolveStrategy(arg string, suggest []string) (path, workspace string, err error) {
	if arg != "" {
		if err := checkStrategyArg(arg, suggest); err != nil {
			return "", "", err
		}
		return arg, "", nil
	}
	if _, err := os.Stat("strategy.py"); err == nil {
		return "strategy.py", "", nil
	}
	home, err := job.DefaultHome()
	if err != nil {
		return "", "", err
	}
	workspace = filepath.Join(home, "workspace")
	path = filepath.Join(workspace, "strategy.py")
	if _, err := os.Stat(path); err == nil {
		return path, workspace, nil
	}
	if err := os.MkdirAll(workspace, 0o755); err != nil {
		return "", "", fmt.Errorf("write the example strategy: %w", err)
	}
	if err := os.WriteFile(path, python.ExampleStrategy(), 0o644); err != nil {
		return "", "", fmt.Errorf("write the example strategy: %w", err)
	}
	return path, workspace, nil
}

// checkStrategyArg refuses a STRATEGY that is not a Python file, before
// anything runs: a mistyped command ("stauts") or a data file given in its
// place would otherwise be imported by Python, or waited for.
func checkStrategyArg(arg string, suggest []string) error {
	if strings.HasSuffix(arg, ".py") {
		return nil
	}
	if len(suggest) > 0 {
		return fmt.Errorf("unknown command %q; did you mean %s? (a STRATEGY is a .py file)", arg, strings.Join(quoted(suggest), " or "))
	}
	if info, err := os.Stat(arg); err == nil && info.IsDir() {
		return fmt.Errorf("STRATEGY %s is a folder: give the strategy's .py file", arg)
	}
	return fmt.Errorf("STRATEGY %q is not a Python file (.py); the commands are jobs, status, logs, report, precheck, sweep, sweeps, prune, keep, montecarlo, check and data (stratbench --help)", arg)
}

// CommandTypo is the error for a first argument that is neither a command
// nor a strategy but close to a command's name (suggest: "swep" → sweep),
// when the command line goes on with arguments or flags of that command
// (`stratbench swep strategy.py --grid …`): the parser would otherwise
// say "accepts at most 1 arg(s)" or "unknown flag: --grid". It returns nil
// when arg is no such typo.
func CommandTypo(arg string, suggest []string) error {
	if len(suggest) == 0 || strings.HasSuffix(arg, ".py") {
		return nil
	}
	return usage(checkStrategyArg(arg, suggest))
}

func quoted(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strconv.Quote(v)
	}
	return out
}

// openStore opens STRATBENCH_HOME and cleans up after a stratbench that was
// killed while running jobs (engine.Recover): every command that
// reads or runs jobs starts that way. What recovery could not do is a
// warning on stderr.
func openStore(stderr io.Writer) (*job.Store, error) {
	home, err := job.DefaultHome()
	if err != nil {
		return nil, err
	}
	store, err := job.OpenStore(home)
	if err != nil {
		return nil, err
	}
	if _, err := engine.Recover(store); err != nil {
		fmt.Fprintln(stderr, "stratbench: warning:", err)
	}
	return store, nil
}
