// Package session is what every run of one stratbench command shares: the
// supervisor's host, the interpreter (probed once, while the data loads),
// the job store, the data (opened once, again only when its files change)
// and, for the commands that run the strategy again at every save (the
// workbench, --ci --watch), a warm template the runs fork from. A command
// opens one session (Open), starts its runs through it (Start) and closes
// it. It names no command-line flag: the refusals of the data and the
// market are handed to Config.Input, which names them. docs/ARCHITECTURE.md,
// "One run", traces a run through it.
package session

import (
	"context"
	"sync"

	"stratbench/backtest"
	"stratbench/data"
	"stratbench/engine"
	"stratbench/job"
	"stratbench/supervisor"
	"stratbench/watch"
)

// Config is what a session's runs run with.
type Config struct {
	Strategy string            // the strategy file
	Host     *supervisor.Host  // the supervisor's host the runs share
	Store    *job.Store        // the home's job store
	Python   string            // the interpreter asked for; "" for $STRATBENCH_PYTHON, $VIRTUAL_ENV, python3
	Params   []string          // the runs' params, k=v, in order
	Sandbox  bool              // the runs run in the sandbox
	Version  string            // stratbench's version, in every job's fingerprint
	Data     []string          // the data files and folders; none for the bundled sample
	Options  data.Options      // how the data is opened (its window, budgets, timeframe)
	Market   backtest.Options  // the market every run replays
	Limits   job.Limits        // the runs' limits; zero: job.DefaultLimits (tests set shorter ones)
	Ended    func(id string)   // called after each run has ended (the home's budget); may be nil
	Input    func(error) error // maps a refusal of the data or the market to the caller's (naming its field); nil leaves it
	// Warm makes Open start the runs' warm template (KeepWarm) as soon
	// as the interpreter is known, while the data loads, so that neither
	// the interpreter's start nor the bridge's imports are on the way to
	// the first run: for the commands that run the strategy again at
	// every save (the workbench, --ci --watch), which keep a template
	// anyway. No code of the strategy runs before the data is checked (a
	// template never imports the strategy's module). One --ci run starts
	// cold: it is the reference run, and a forked run differs from a cold
	// one where a fork shows (engine.Pool: what a leading import started
	// or printed stays the template's).
	Warm bool
}

// PythonError is an interpreter that could not be found or probed: bad
// input.
type PythonError struct{ Err error }

func (e *PythonError) Error() string { return e.Err.Error() }
func (e *PythonError) Unwrap() error { return e.Err }

// Session holds what every run of one stratbench invocation shares.
type Session struct {
	cfg    Config
	python *engine.Interpreter

	dataMu  sync.Mutex
	data    *data.Set // opened by the first run, again when its files change
	retired *data.Set // the set data replaced, closed when it is replaced in turn
	// fresh: data was opened by the setup and no run has had it yet; the
	// first run takes it as it is (its files may look changed: a file
	// written within two seconds of its opening is not taken as unchanged
	// by Stale, and opening the data again would hold it twice).
	fresh bool

	// pool, when set (KeepWarm), starts the session's runs from a warm
	// template instead of an interpreter each.
	pool *engine.Pool

	// shown is the job of the session's latest run, whose folder stays
	// held (engine.Config.Hold) while the command uses it: --ci prints
	// it and writes its report, the workbench shows it. The next run
	// replaces it; Close lets it go.
	shownMu sync.Mutex
	shown   *engine.Job
	// started are the runs not seen ended yet, which Wait waits for.
	started []*engine.Job
}

// Open opens a session. It calls beforeProbe, when it is not nil, before
// the interpreter is probed, with ctx and the interpreter as far as it is
// known then: all of it when the probe's answer was kept from an earlier
// start (engine.CachedPython: then nothing is probed), else only the path
// the probe will run (engine.PythonPath; the probe's Executable may
// differ). s.Python() is nil then. A caller starts there what needs only
// the interpreter, so that it runs while the probe does; beforeProbe is
// not called when the interpreter cannot be found. Bad data is refused
// before anything runs (Config.Input's error): the data loads while the
// interpreter is probed. An interpreter that cannot be had is a
// *PythonError; when ctx ends first, Open returns its error.
func Open(ctx context.Context, cfg Config, beforeProbe func(ctx context.Context, s *Session, py *engine.Interpreter)) (*Session, error) {
	s := &Session{cfg: cfg}
	cacheDir := engine.DefaultCacheDir(cfg.Store.Home())
	cached, _ := engine.CachedPython(cfg.Python, cacheDir)
	if cfg.Warm {
		s.keepWarm(cached) // nil: after the probe
	}
	if beforeProbe != nil {
		if cached != nil {
			beforeProbe(ctx, s, cached)
		} else if path, err := engine.PythonPath(cfg.Python); err == nil {
			beforeProbe(ctx, s, &engine.Interpreter{Executable: path})
		}
	}
	// The data loads while the interpreter is probed (a pyenv shim alone
	// takes a third of a second).
	loaded := make(chan error, 1)
	go func() {
		_, err := s.Driver(ctx)
		if err == nil {
			s.dataMu.Lock()
			s.fresh = true // the first run takes the set as it is
			s.dataMu.Unlock()
		}
		loaded <- err
	}()
	py, err := cached, error(nil)
	if py == nil {
		py, err = engine.FindPythonCached(ctx, cfg.Python, cacheDir)
	}
	if err == nil && cfg.Warm {
		s.keepWarm(py) // nothing when it started on the cached answer, this one
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
			s.Close()
		}()
		return nil, ctx.Err()
	}
	if err != nil {
		s.Close()
		return nil, &PythonError{err}
	}
	if dataErr != nil {
		s.Close()
		return nil, dataErr
	}
	s.python = py
	return s, nil
}

// New returns a session of cfg with no interpreter and no data opened yet
// (for tests of its data, which Open opens).
func New(cfg Config) *Session { return &Session{cfg: cfg} }

// Python is the session's interpreter (nil until Open has probed it).
func (s *Session) Python() *engine.Interpreter { return s.python }

// Strategy is the session's strategy file.
func (s *Session) Strategy() string { return s.cfg.Strategy }

// Store is the home's job store.
func (s *Session) Store() *job.Store { return s.cfg.Store }

// Sandbox reports whether the session's runs run in the sandbox.
func (s *Session) Sandbox() bool { return s.cfg.Sandbox }

// DataOptions are how the session opens its data.
func (s *Session) DataOptions() data.Options { return s.cfg.Options }

// input maps err as Config.Input says.
func (s *Session) input(err error) error {
	if s.cfg.Input == nil {
		return err
	}
	return s.cfg.Input(err)
}

// Driver returns a fresh market on the session's data.
func (s *Session) Driver(ctx context.Context) (*backtest.Driver, error) {
	set, err := s.DataSet(ctx)
	if err != nil {
		return nil, err
	}
	d, err := backtest.NewDriver(set, s.cfg.Market)
	if err != nil {
		return nil, s.input(err)
	}
	return d, nil
}

// DataSet returns the session's data: Config.Data (files, folders) or the
// bundled sample, inside the window. It is opened once and again only
// when its files changed (data.Set.Stale): watch mode re-runs on the same
// data without reading it again when it fits the decode budget, and
// streams it again when it does not. Runs that replay at once (a sweep's)
// share one set: take it once and build each run's driver on it
// (backtest.NewDriver), so that a file changed during the sweep cannot
// give its runs different data.
func (s *Session) DataSet(ctx context.Context) (*data.Set, error) {
	s.dataMu.Lock()
	defer s.dataMu.Unlock()
	if s.data != nil && (s.fresh || !s.data.Stale()) {
		s.fresh = false
		return s.data, nil
	}
	var set *data.Set
	var err error
	if len(s.cfg.Data) == 0 {
		set, err = data.Sample(s.cfg.Options.Window)
	} else {
		set, err = data.Open(ctx, s.cfg.Data, s.cfg.Options)
	}
	if err != nil {
		return nil, s.input(err)
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

// KeepWarm makes the session's runs start from a warm template, as a
// sweep's do (engine.Pool, one slot): for the workbench and --ci --watch,
// which run the strategy again at every save. The template starts now, in
// the background; it imports the bridge and the strategy's leading
// third-party imports, never a module of the strategy's folder, and each
// run forked from it is a tree of its own with its own limits and fresh
// module state, or the run starts cold (engine.Pool says when: always
// under the sandbox). RefreshOn replaces a template whose imports are no
// longer the strategy's.
func (s *Session) KeepWarm() { s.keepWarm(s.python) }

// keepWarm is KeepWarm on interpreter py, once: a session keeps one
// template.
func (s *Session) keepWarm(py *engine.Interpreter) {
	if s.pool != nil || py == nil {
		return
	}
	pool, err := engine.NewPool(s.jobConfigOn(py), 1)
	if err != nil {
		return // each run's engine.Start says what is wrong
	}
	s.pool = pool
	pool.Warm()
}

// RefreshOn passes changes on, and has the session's template checked at
// each change of the strategy (engine.Pool.Refresh): one whose leading
// imports are no longer the strategy's is replaced in the background,
// while the run in flight stops, and the next run waits for the new one.
// Without a warm template it returns changes. The goroutine it starts
// ends when changes is closed (it closes its own channel then) or ctx
// ends.
func (s *Session) RefreshOn(ctx context.Context, changes <-chan watch.Change) <-chan watch.Change {
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

// Close ends the session's template (once its runs have ended) and
// releases its data files.
func (s *Session) Close() {
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

// Start starts one job on the strategy's current content: breakpoint()
// there writes a notice and goes on.
func (s *Session) Start(ctx context.Context) (*engine.Job, error) { return s.StartWith(ctx, nil) }

// StartWith starts one job on the strategy's current content, with the
// workbench's debugger when debug is not nil.
func (s *Session) StartWith(ctx context.Context, debug *engine.Debug) (*engine.Job, error) {
	d, err := s.Driver(ctx)
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
func (s *Session) show(j *engine.Job) {
	s.shownMu.Lock()
	old := s.shown
	s.shown = j
	if j != nil {
		live := s.started[:0]
		for _, o := range s.started {
			select {
			case <-o.Done():
			default:
				live = append(live, o)
			}
		}
		s.started = append(live, j)
	}
	s.shownMu.Unlock()
	if old != nil {
		old.Release()
	}
}

// Wait waits for every run the session started to end (its final report
// on disk): the workbench calls it before stratbench exits.
func (s *Session) Wait() {
	s.shownMu.Lock()
	started := s.started
	s.shownMu.Unlock()
	for _, j := range started {
		<-j.Done()
	}
}

// jobConfig is the Config of the session's runs.
func (s *Session) jobConfig() engine.Config { return s.jobConfigOn(s.python) }

// jobConfigOn is jobConfig on interpreter py.
func (s *Session) jobConfigOn(py *engine.Interpreter) engine.Config {
	cfg := s.RunConfig(py)
	if s.cfg.Limits != (job.Limits{}) {
		cfg.Limits = s.cfg.Limits
	}
	cfg.Params = s.cfg.Params
	cfg.Ended = s.cfg.Ended // the home's budget, once each run has ended
	cfg.Hold = true
	return cfg
}

// RunConfig is the Config a run of the session's strategy starts with on
// interpreter py, before its params: a sweep's runs each add theirs and
// their sweep tag.
func (s *Session) RunConfig(py *engine.Interpreter) engine.Config {
	return engine.Config{Strategy: s.cfg.Strategy, Python: py, Home: s.cfg.Store.Home(), Limits: job.DefaultLimits(),
		Sandbox: s.cfg.Sandbox, Version: s.cfg.Version, Host: s.cfg.Host}
}

// WatchStrategy keeps s's runs warm (KeepWarm) and watches its strategy
// with o until ctx ends: it returns the changes the runs refresh on
// (RefreshOn), for the commands that run the strategy again at every
// save. A watch that cannot be set up is watch.New's error.
func (s *Session) WatchStrategy(ctx context.Context, o watch.Options) (<-chan watch.Change, error) {
	s.KeepWarm()
	w, err := watch.New(s.Strategy(), o)
	if err != nil {
		return nil, err
	}
	go w.Run(ctx) // its owner is ctx
	return s.RefreshOn(ctx, w.Changes()), nil
}
