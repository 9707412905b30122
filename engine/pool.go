// This file is long because the warm pool is one owner of shared state:
// the slots, the templates each slot forks from, their refresh and retire
// when the strategy or its data change, and the fall back to cold starts,
// all under one lock whose rules (who may close a template, when a slot
// is free) read best beside every place that takes it.

package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"stratbench/contract"
	"stratbench/job"
	"stratbench/python"
	"stratbench/supervisor"
)

// Pool starts many jobs of one strategy fast: it keeps warm templates (an
// interpreter that has imported the bridge and the third-party modules the
// strategy's leading imports name, never a module of the strategy's
// folder), one for every slotsPerTemplate of its slots, and a job's worker
// is forked from its slot's template instead of starting an interpreter of
// its own. The interpreter's start and those imports are paid once per
// template, not once per job.
//
// A job a Pool starts is an ordinary job in every other way: its job folder,
// report, events, limits, fingerprint, orders hash and metrics are those
// Start would give it. Its worker is a tree of its own, in a PID namespace
// of its own, with every limit of a single run, and imports the strategy's
// module itself (fresh module state: the template never imports it; the
// Python random generators the template imported are reseeded in each run,
// multiprocessing's authentication key and logging's start time renewed).
// The template is supervised too (its own tree, with the job's memory,
// process and output limits), and nothing it says decides a limit or a
// membership (see supervisor.Template).
//
// Jobs start cold, exactly as Start starts them (the Pool then only counts
// them; see PoolStats), when:
//   - the pool's Config asks for the sandbox: the sandbox forbids the fork a
//     warm start needs (python.ErrSandboxStartsCold), so a sandboxed run
//     pays a whole interpreter start;
//   - the system refuses PID namespaces, or STRATBENCH_TREE_TRACKING=fallback
//     forces the fallback tracking (supervisor.ErrNoNamespaces);
//   - a template cannot start (its interpreter fails before it is ready);
//   - the job's Config differs from the pool's in what a template fixes
//     (Strategy, Python, Env, Limits, Sandbox, CacheDir, Host);
//   - a template refuses a fork (a file of the strategy's folder now shadows
//     a module it imported or looked up, or a file its imports read has
//     changed) or has ended: that job starts cold, and the next job of its
//     slots starts a new template; after maxRefusals refusals, every later
//     job starts cold (the runs themselves may change what the templates
//     read, and a new template for every other job would cost more than
//     cold starts). A template that refused
//     is retired, not killed: the runs forked from it that are still in
//     flight (their PID namespaces lie within its) end as they would have,
//     and it is closed after the last of them. (A template that ended took
//     its runs in flight with it: see supervisor.Result.TemplateLost.)
//
// The first three hold for the pool's whole life: the Pool then starts no
// template (no more of them, after one that could not start), and every
// job pays an interpreter's start as with Start.
//
// Each template holds an interpreter's memory (18 MiB, 27 MiB with numpy,
// measured) besides its jobs', from its first job until Close; it counts
// toward its own limits, never toward a job's. Its methods are safe for
// concurrent use.
type Pool struct {
	cfg       Config // the templates': Strategy resolved, Limits defaulted
	slots     []*poolSlot
	templates []*poolTemplate // slot i forks from templates[i%len(templates)]

	mu     sync.Mutex // guards what follows, and the slots' busy counts
	closed bool
	// coldReason, when set, is why no job of this pool starts warm any
	// more: the sandbox, or a template that could not start (which would
	// repeat, and cost each job an interpreter's start more).
	coldReason error
	jobs       sync.WaitGroup // one per job in flight: its slot's release
	// warming holds one per template Warm or Refresh is starting (or
	// checking); stopWarm cancels bg, their context (Close). bg is nil
	// until the first of them.
	warming  sync.WaitGroup
	bg       context.Context
	stopWarm context.CancelFunc
	warmed   bool // Warm was called

	warm, cold atomic.Int64
	refusals   atomic.Int64             // forks the pool's templates refused (not as stale)
	stale      atomic.Int64             // templates replaced as stale (a fork refused, or Refresh)
	started    atomic.Int64             // templates started
	lastCold   atomic.Pointer[string]   // why the last job that started cold did
	preloaded  atomic.Pointer[[]string] // what the latest template imported
}

// PoolStats counts how a Pool's jobs started.
type PoolStats struct {
	Warm int64 // jobs whose worker was forked from a template
	Cold int64 // jobs whose worker started an interpreter of its own
	// ColdReason says why the pool starts every job cold; empty while it
	// may start them warm.
	ColdReason string
	// LastColdReason says why the latest job that started cold did.
	LastColdReason string
	// Preloaded names the modules the latest template to start says it
	// imported (the template's own claim: for display and tests).
	Preloaded []string
	// Templates counts the templates started (ready to fork).
	Templates int64
	// Stale counts the templates replaced because the strategy's leading
	// imports changed since they started (Refresh, or a fork refused).
	Stale int64
}

// slotsPerTemplate is how many slots share a template. A template has up
// to two forks in flight (supervisor's maxForking: the exchange with the
// template one at a time, the runs' inits starting side by side), and a
// fork is quick (a run's first hook prints 14 ms after the fork request:
// supervisor's BenchmarkWarmStart), so slots that share one seldom wait
// for each other; a template more costs an
// interpreter's start when the sweep starts, competing with its first runs
// for the same cores, and an interpreter's memory (more with pandas) until
// the pool is closed: 16 slots keep 4 templates, not 16.
const slotsPerTemplate = 4

// poolTemplates is how many templates a pool of slots slots keeps on a
// machine of cpus CPUs: one for every slotsPerTemplate slots, and no more
// than the CPUs, which start them (each an interpreter's start and its
// imports, at once when the sweep starts) and run their forks: a template
// more than that only waits for a core and holds an interpreter's memory
// (--jobs 200 on 2 CPUs started 50 of them).
func poolTemplates(slots, cpus int) int {
	return max(1, min((slots+slotsPerTemplate-1)/slotsPerTemplate, cpus))
}

// maxRefusals is how many forks a Pool's templates may refuse before its
// jobs all start cold.
const maxRefusals = 3

// poolSlot is one slot: the jobs it has in flight, and the template they
// fork from, shared with other slots.
type poolSlot struct {
	template *poolTemplate
	busy     int // jobs in flight; guarded by the Pool's mu
}

// poolTemplate is a template of the pool: started at the first warm job of
// one of its slots (or by Warm), and again after it ended or was retired.
type poolTemplate struct {
	starting chan struct{} // a lock, held while the template starts, that a wait for may give up (ctx)
	output   *tailLines    // the template's last lines of output, for its errors

	mu   sync.Mutex
	live *liveTemplate // nil before the first job, and after the template ended, failed or was retired
}

// liveTemplate is a started template and its users: the runs forked from
// it that are in flight, and the forks under way. A template the pool no
// longer forks from (it is no longer its poolTemplate's live one) is
// retired: closed at once when it has no user, else when its last user is
// done (closing it would end its runs: their PID namespaces lie within
// its). A user is counted before its fork starts, so that no retire closes
// a template between a fork and its count.
type liveTemplate struct {
	tp *supervisor.Template
	// env is the environment the template started with: what its imports
	// read from it stays in every run, so it forks only jobs of that
	// environment (a run's own is applied over the template's).
	env []string
	// interpreter is the interpreter's file as the template started it
	// (nil when it could not be read): a cold start after the
	// interpreter was replaced on disk (an upgrade) runs the new one, so
	// the template then forks no more.
	interpreter os.FileInfo
	users       int // guarded by the poolTemplate's mu
	// stale is set once the template said it is stale (counted once in
	// the pool's stats, whether Refresh or a fork found out).
	stale atomic.Bool
}

// noteStale counts lt, found stale, in the pool's stats, once.
func (p *Pool) noteStale(lt *liveTemplate) {
	if lt.stale.CompareAndSwap(false, true) {
		p.stale.Add(1)
	}
}

// sameFile reports whether a and b, from os.Stat, are one unchanged file.
func sameFile(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// NewPool returns a pool of slots slots (at least one) for cfg's strategy,
// with a template for every slotsPerTemplate of them, and never more
// templates than the machine has CPUs (poolTemplates). Templates start
// lazily, each at the first job of one of its slots (or all at once with
// Warm), so a pool costs nothing until it is used.
// cfg is the Config every job of the pool is expected to have but its
// Params (and its Version and Sweep tag); Start takes each job's own
// Config. It fails only where Start would fail for cfg before the job
// starts (no Python or Host, a strategy path that does not resolve).
func NewPool(cfg Config, slots int) (*Pool, error) {
	if cfg.Python == nil || cfg.Host == nil {
		return nil, errors.New("engine: Config.Python and Config.Host are required")
	}
	cfg, err := resolveConfig(cfg)
	if err != nil {
		return nil, err
	}
	slots = max(slots, 1)
	p := &Pool{cfg: cfg, slots: make([]*poolSlot, slots), templates: make([]*poolTemplate, poolTemplates(slots, runtime.NumCPU()))}
	for i := range p.templates {
		p.templates[i] = &poolTemplate{output: newTailLines(8), starting: make(chan struct{}, 1)}
	}
	for i := range p.slots {
		p.slots[i] = &poolSlot{template: p.templates[i%len(p.templates)]}
	}
	p.coldReason = python.WarmStart(cfg.Sandbox)
	return p, nil
}

// Start starts a job as the package's Start does, with its worker forked
// from a slot's template where the pool can (see Pool for when it starts
// cold). Every job in flight holds a slot: a job goes to a slot with no
// job in flight when there is one, else to the least busy; callers that
// run at most as many jobs at once as the pool has slots give each job a
// slot of its own. Cancelling ctx kills the job's worker, as in Start;
// cancelled while the worker is being forked, it kills the template too
// (its later answers could not be matched to requests: supervisor's
// Template.Fork), and with it the runs of the other slots that share it:
// give the jobs of one pool one context, as a sweep does. After Close,
// Start starts jobs cold.
func (p *Pool) Start(ctx context.Context, cfg Config, d contract.Driver) (*Job, error) {
	resolved, err := resolveConfig(cfg)
	if err != nil {
		return start(ctx, cfg, d, nil) // Start's own error
	}
	if why := p.coldFor(resolved); why != nil {
		p.noteCold(why)
		return start(ctx, cfg, d, nil)
	}
	s := p.take()
	if s == nil {
		p.noteCold(errors.New("the pool is closed"))
		return start(ctx, cfg, d, nil)
	}
	l := &warmLauncher{pool: p, slot: s}
	j, err := start(ctx, cfg, d, l)
	if err != nil {
		p.release(l)
		return nil, err
	}
	go func() {
		defer p.release(l)
		<-j.Done()
	}()
	return j, nil
}

// Warm starts every template now, in the background, instead of at the
// first job of one of its slots, so that a caller with work to do before its first
// job (a sweep reads the strategy's MANIFEST, loads the data and plans)
// does it while the interpreters start and import. Nothing changes but
// when the templates start: a template that cannot start makes the pool's
// jobs start cold, as it would at a first job, and a pool whose jobs start
// cold starts none. Warm returns at once; a second call does nothing;
// Close cancels the starts still under way and waits for them.
func (p *Pool) Warm() {
	p.mu.Lock()
	if p.closed || p.coldReason != nil || p.warmed {
		p.mu.Unlock()
		return
	}
	p.warmed = true
	ctx := p.background()
	p.warming.Add(len(p.templates))
	p.mu.Unlock()
	spec := workerSpec(p.cfg)
	for _, t := range p.templates {
		// The goroutine's owner is the pool: Close cancels ctx and waits.
		go func() {
			defer p.warming.Done()
			p.warmTemplate(ctx, t, spec)
		}()
	}
}

// Refresh has each live template say whether it is stale (its strategy's
// leading imports changed since it started: supervisor.Template.Stale),
// and replaces one that is (or that ended) with a new template, in the
// background, so that the next job of its slots waits for the new one
// rather than forking from the stale one or starting cold. Call it when
// the strategy may have changed (a save), ahead of the job that will run
// it: a job that comes first finds the stale template itself, at its
// fork, and waits the same way (warmLauncher.fork). A template that is
// not live yet is started, as Warm would. Refresh returns at once; Close
// cancels what it started and waits for it.
func (p *Pool) Refresh() {
	p.mu.Lock()
	if p.closed || p.coldReason != nil {
		p.mu.Unlock()
		return
	}
	ctx := p.background()
	p.warming.Add(len(p.templates))
	p.mu.Unlock()
	spec := workerSpec(p.cfg)
	for _, t := range p.templates {
		// The goroutine's owner is the pool: Close cancels ctx and waits.
		go func() {
			defer p.warming.Done()
			p.refreshTemplate(ctx, t, spec)
		}()
	}
}

// background returns the context of what Warm and Refresh start, which
// Close cancels. Call it with p.mu held.
func (p *Pool) background() context.Context {
	if p.bg == nil {
		p.bg, p.stopWarm = context.WithCancel(context.Background())
	}
	return p.bg
}

// refreshTemplate is Refresh's for t.
func (p *Pool) refreshTemplate(ctx context.Context, t *poolTemplate, spec supervisor.Spec) {
	if lt := t.use(); lt != nil {
		checkCtx, cancel := context.WithTimeout(ctx, p.cfg.Limits.Startup)
		stale, _, err := lt.tp.Stale(checkCtx)
		cancel()
		if ctx.Err() != nil {
			t.done(lt)
			return
		}
		if stale {
			p.noteStale(lt)
		}
		if stale || err != nil {
			t.retire(lt) // a broken check killed it
		}
		t.done(lt)
	}
	p.warmTemplate(ctx, t, spec)
}

// templateSampleInterval is how often a template's tree is sampled: less
// often than a run's. A template runs nothing of the strategy's folder;
// once its imports are done it waits for fork requests, and each run forked
// from it is a tree of its own, sampled at the run's interval. A sample of
// an idle template costs about 0.16 ms of stratbench's CPU (2-vCPU VM), so
// at a run's 20 ms each slot's template alone took 8 ms of CPU a second,
// all through the sweep: a seventh of a core on a 16-slot machine.
const templateSampleInterval = 100 * time.Millisecond

// warmTemplate starts t for Warm. Installing the bridge is a check of
// three files (and, for an interpreter stratbench has not run before,
// compiling it); when it fails, the first job says why, and the pool stays
// warm, as it does for a job (warmLauncher.start).
func (p *Pool) warmTemplate(ctx context.Context, t *poolTemplate, spec supervisor.Spec) {
	lt, err := p.template(ctx, t, p.cfg.Host, bridgeInstaller(p.cfg), spec)
	if err != nil {
		return // a template that could not start made the pool cold (Pool.template)
	}
	t.done(lt)
}

// Stats says how the pool's jobs started so far.
func (p *Pool) Stats() PoolStats {
	st := PoolStats{Warm: p.warm.Load(), Cold: p.cold.Load(), Templates: p.started.Load(), Stale: p.stale.Load()}
	if why := p.allCold(); why != nil {
		st.ColdReason = why.Error()
	}
	if s := p.lastCold.Load(); s != nil {
		st.LastColdReason = *s
	}
	if m := p.preloaded.Load(); m != nil {
		st.Preloaded = *m
	}
	return st
}

// Close ends the pool's templates, once the jobs it started have ended:
// it waits for them. A pool's templates hold memory (an interpreter each)
// until it is closed. Close is safe to call more than once.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	if p.stopWarm != nil {
		p.stopWarm()
	}
	p.mu.Unlock()
	p.jobs.Wait()
	p.warming.Wait()
	// No run is in flight and no fork under way: a template has no user
	// left, and retiring it closes it (retired ones are closed already).
	for _, t := range p.templates {
		t.mu.Lock()
		lt := t.live
		t.mu.Unlock()
		if lt != nil {
			t.retire(lt)
		}
	}
}

// coldFor says why a job of cfg cannot start warm, or nil.
func (p *Pool) coldFor(cfg Config) error {
	if why := p.allCold(); why != nil {
		return why
	}
	a, b := p.cfg, cfg
	switch {
	case a.Strategy != b.Strategy:
		return fmt.Errorf("the job's strategy %s is not the pool's %s", b.Strategy, a.Strategy)
	case b.Python == nil || a.Python.Executable != b.Python.Executable:
		return errors.New("the job's interpreter is not the pool's")
	case a.Sandbox != b.Sandbox || a.Host != b.Host || a.CacheDir != b.CacheDir || a.Limits != b.Limits || !maps.Equal(a.Env, b.Env):
		return errors.New("the job's Config differs from the pool's in what a template fixes")
	}
	return nil
}

// take reserves the slot for a job: an idle one if any (one whose template
// is live first), else the least busy. It returns nil after Close.
func (p *Pool) take() *poolSlot {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	var best *poolSlot
	bestBusy, bestWarm := 0, false
	for _, s := range p.slots {
		s.template.mu.Lock()
		warm := s.template.live != nil
		s.template.mu.Unlock()
		busy := s.busy
		if best == nil || busy < bestBusy || busy == bestBusy && warm && !bestWarm {
			best, bestBusy, bestWarm = s, busy, warm
		}
	}
	best.busy++
	p.jobs.Add(1)
	return best
}

// release gives a job's slot back, and its run's template (a retired one
// is closed with its last run).
func (p *Pool) release(l *warmLauncher) {
	if l.forkedFrom != nil {
		l.slot.template.done(l.forkedFrom)
	}
	p.mu.Lock()
	l.slot.busy--
	p.mu.Unlock()
	p.jobs.Done()
}

// allCold says why no job of the pool starts warm any more, or nil.
func (p *Pool) allCold() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.coldReason
}

// goCold makes every later job of the pool start cold, for why.
func (p *Pool) goCold(why error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.coldReason == nil {
		p.coldReason = why
	}
}

func (p *Pool) noteCold(why error) {
	p.cold.Add(1)
	msg := why.Error()
	p.lastCold.Store(&msg)
}

// resolveConfig does what Start does to a Config before the job exists:
// the default limits, the strategy's real path.
func resolveConfig(cfg Config) (Config, error) {
	if cfg.Limits == (job.Limits{}) {
		cfg.Limits = job.DefaultLimits()
	}
	cfg.Limits = withDiskDefaults(cfg.Limits)
	path, err := filepath.Abs(cfg.Strategy)
	if err != nil {
		return cfg, &UsageError{fmt.Errorf("strategy %s: %w", cfg.Strategy, err)}
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	cfg.Strategy = path
	return cfg, nil
}

// warmLauncher starts one job's worker from its slot's template.
type warmLauncher struct {
	pool *Pool
	slot *poolSlot
	// forkedFrom is the template the job's worker was forked from, nil
	// for a cold start; set by start, before the job runs.
	forkedFrom *liveTemplate
}

// start starts the worker spec describes (a cold start's spec without its
// Args, with the job's descriptors as ExtraFiles): forked from the slot's
// template, started first if need be, or, when the template cannot serve,
// cold with host.Start. install installs the bridge and returns the
// program an interpreter runs; start calls it only when it starts one (a
// template, or the cold start), so that a fork reads no file.
func (l *warmLauncher) start(ctx context.Context, host *supervisor.Host, install func(context.Context) (string, error), spec supervisor.Spec) (*supervisor.Process, error) {
	proc, err := l.fork(ctx, host, install, spec)
	if err == nil || ctx.Err() != nil {
		return proc, err
	}
	var failedInstall *bridgeInstallError
	if errors.As(err, &failedInstall) {
		// As a cold start that cannot install the bridge: the job fails,
		// and the pool stays warm (the next job tries again).
		return nil, failedInstall.err
	}
	p := l.pool
	p.noteCold(err)
	program, err := install(ctx)
	if err != nil {
		return nil, err
	}
	spec.Args = python.BridgeArgs(program, p.cfg.Strategy)
	return host.Start(ctx, spec)
}

// staleRetries is how many times a job waits for a new template when the
// one it would fork from is stale (the strategy's leading imports changed
// since it started: supervisor.ForkRefusedError.Stale) before it starts
// cold: a file saved again while the new template imported.
const staleRetries = 2

// fork forks the job's worker from the slot's template, started first if
// need be. A template that says it is stale is replaced, and the job waits
// for the new one (never a run on a template whose imports are not its
// strategy's), staleRetries times at most; such a refusal is not one of
// maxRefusals. On an error the caller starts the job cold, but when ctx
// ended or installing the bridge failed.
func (l *warmLauncher) fork(ctx context.Context, host *supervisor.Host, install func(context.Context) (string, error), spec supervisor.Spec) (*supervisor.Process, error) {
	p, t := l.pool, l.slot.template
	for attempt := 0; ; attempt++ {
		lt, err := p.template(ctx, t, host, install, spec)
		if err != nil {
			return nil, err // one that could not start made the pool cold (Pool.template)
		}
		// A fork takes milliseconds; one that takes the startup limit has
		// a template that stalls it (it holds one of the template's forks
		// in flight meanwhile): the job then starts cold.
		forkCtx, cancel := context.WithTimeout(ctx, p.cfg.Limits.Startup)
		proc, err := lt.tp.Fork(forkCtx, supervisor.RunSpec{
			Args:           python.RunArgs(p.cfg.Strategy),
			Env:            spec.Env,
			Dir:            spec.Dir,
			ExtraFiles:     spec.ExtraFiles,
			Limits:         spec.Limits,
			FileSizeBytes:  spec.FileSizeBytes,
			DevShmBytes:    spec.DevShmBytes,
			SampleInterval: spec.SampleInterval,
			Output:         spec.Output,
			BindMounts:     spec.BindMounts,
		})
		cancel()
		if err == nil {
			p.warm.Add(1)
			l.forkedFrom = lt // its user until the job has ended (release)
			return proc, nil
		}
		// Refused (a shadowed module, a changed file: it repeats; stale
		// imports) or broken (the template was killed): the next job of
		// its slots starts a new template.
		t.retire(lt)
		t.done(lt)
		var refused *supervisor.ForkRefusedError
		switch {
		case ctx.Err() != nil:
			return nil, err
		case errors.As(err, &refused) && refused.Stale:
			p.noteStale(lt)
			if attempt < staleRetries {
				continue
			}
		case errors.As(err, &refused) && p.refusals.Add(1) == maxRefusals:
			p.goCold(fmt.Errorf("its templates refused %d forks, the last because %s", maxRefusals, refused.Reason))
		}
		return nil, err
	}
}

// bridgeInstallError is Pool.template's error when installing the bridge
// failed, before any template started: the launcher's install function
// fails the same way for a cold start, so it is the job's failure, not a
// reason to start the pool's jobs cold.
type bridgeInstallError struct{ err error }

func (e *bridgeInstallError) Error() string { return e.err.Error() }
func (e *bridgeInstallError) Unwrap() error { return e.err }

// template returns t's live template, started if need be, with a user
// counted for the caller: call t.done when the fork failed, or its run has
// ended. A job waits here while another starts t's template (Warm, or a
// job before it), for as long as the startup limit at most: the wait
// ends with ctx (a job killed meanwhile ends at once; one stopped waits,
// as a cold start's startup completes before the stop, and runs
// on_finish), and a template that could not start makes the pool cold
// before the next in line looks (that one then starts cold, instead of
// trying a template of the same imports again).
func (p *Pool) template(ctx context.Context, t *poolTemplate, host *supervisor.Host, install func(context.Context) (string, error), spec supervisor.Spec) (*liveTemplate, error) {
	select {
	case t.starting <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-t.starting }()
	if why := p.allCold(); why != nil {
		return nil, why
	}
	if lt := t.use(); lt != nil {
		select {
		case <-lt.tp.Process().Done():
			t.retire(lt)
			t.done(lt)
		default:
			now, _ := os.Stat(spec.Path)
			if slices.Equal(lt.env, spec.Env) && sameFile(lt.interpreter, now) {
				return lt, nil
			}
			// stratbench's own environment, which a worker's inherits
			// in part, or the interpreter, changed since the template
			// started.
			t.retire(lt)
			t.done(lt)
		}
	}
	program, err := install(ctx)
	if err != nil {
		return nil, &bridgeInstallError{err}
	}
	interpreter, _ := os.Stat(spec.Path)
	startCtx, cancel := context.WithTimeout(ctx, p.cfg.Limits.Startup)
	defer cancel()
	tp, err := host.StartTemplate(startCtx, supervisor.Spec{
		Path: spec.Path,
		Args: python.TemplateArgs(program, p.cfg.Strategy, supervisor.TemplateSocketFD),
		Env:  spec.Env,
		Dir:  spec.Dir,
		// The template's own tree: one interpreter, and the intermediate
		// processes of a fork for an instant.
		Limits:         supervisor.Limits{MemoryBytes: spec.Limits.MemoryBytes, Processes: spec.Limits.Processes, Tasks: spec.Limits.Tasks, OutputBytes: 1 << 20},
		DevShmBytes:    spec.DevShmBytes,
		SampleInterval: max(spec.SampleInterval, templateSampleInterval),
		Output:         t.output.add,
	})
	if err != nil {
		if tail := t.output.text(); tail != "" {
			err = fmt.Errorf("%w (its last output: %s)", err, tail)
		}
		if ctx.Err() == nil {
			// The pool's jobs start cold from now on (see Pool), the
			// next in line too: it looks once the lock is let go.
			p.goCold(err)
		}
		return nil, err
	}
	lt := &liveTemplate{tp: tp, env: slices.Clone(spec.Env), interpreter: interpreter, users: 1}
	t.mu.Lock()
	t.live = lt
	t.mu.Unlock()
	modules := tp.Preloaded()
	p.preloaded.Store(&modules)
	p.started.Add(1)
	return lt, nil
}

// use returns t's live template with a user counted, or nil.
func (t *poolTemplate) use() *liveTemplate {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.live != nil {
		t.live.users++
	}
	return t.live
}

// done ends a user of lt, and closes lt when it was its last and lt is
// retired.
func (t *poolTemplate) done(lt *liveTemplate) {
	t.mu.Lock()
	lt.users--
	t.mu.Unlock()
	t.closeIfUnused(lt)
}

// retire makes lt a template no job forks from: the next starts a new
// one. lt is closed now if it has no user, else by the done of its last
// (a template that ended, or that Fork killed, has no run left to end:
// closing it only releases what it held).
func (t *poolTemplate) retire(lt *liveTemplate) {
	t.mu.Lock()
	if t.live == lt {
		t.live = nil
	}
	t.mu.Unlock()
	t.closeIfUnused(lt)
}

// closeIfUnused closes lt if it is retired and has no user. It may close
// it more than once (a second retire), which Template.Close allows.
func (t *poolTemplate) closeIfUnused(lt *liveTemplate) {
	t.mu.Lock()
	unused := t.live != lt && lt.users == 0
	t.mu.Unlock()
	if unused {
		lt.tp.Close()
	}
}

// tailLines keeps the last lines of a template's output.
type tailLines struct {
	mu    sync.Mutex
	max   int
	lines []string
}

func newTailLines(n int) *tailLines { return &tailLines{max: n} }

func (t *tailLines) add(l supervisor.Line) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == t.max {
		t.lines = append(t.lines[:0], t.lines[1:]...)
	}
	t.lines = append(t.lines, l.Text)
}

// tailTextBytes bounds the tail an error quotes: a line of output may be
// 64 KiB, and the error reaches the user's terminal (a sweep's cold notice).
const tailTextBytes = 1000

// text returns the last lines, joined, at most tailTextBytes of their end.
func (t *tailLines) text() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.Join(t.lines, " | ")
	if len(s) <= tailTextBytes {
		return s
	}
	s = s[len(s)-tailTextBytes:]
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return "…" + s
}
