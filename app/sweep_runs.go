package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"stratbench/backtest"
	"stratbench/contract"
	"stratbench/data"
	"stratbench/engine"
	"stratbench/job"
	"stratbench/sweep"
)

// sweepData is the data of a sweep, opened once and shared by its runs:
// each run gets a market of its own (a backtest.Driver, which reads the
// set through a stream of its own) over the sweep's window, or over its
// fold's, whose set is opened once for all the runs of that window.
type sweepData struct {
	sess   *session
	base   *data.Set // the sweep's window: the session's set
	market backtest.Options

	mu      sync.Mutex
	windows map[string]*data.Set // a fold's windows, by Window.String
}

// loadSweepData takes the session's data (opened and checked by
// newSession) for the whole sweep.
func loadSweepData(ctx context.Context, s *session) (*sweepData, error) {
	set, err := s.dataSet(ctx)
	if err != nil {
		return nil, err
	}
	return &sweepData{sess: s, base: set, market: s.opts.market(), windows: map[string]*data.Set{}}, nil
}

// set returns the data of the sweep's window, or of w (a fold's half-open
// window, replayed as the --from and --to that w.RunFlags gives, so that
// the run is exactly the --ci run with those flags), opened once.
func (sd *sweepData) set(ctx context.Context, w *sweep.Window) (*data.Set, error) {
	if w == nil {
		return sd.base, nil
	}
	sd.mu.Lock()
	defer sd.mu.Unlock()
	if set, ok := sd.windows[w.String()]; ok {
		return set, nil
	}
	win, err := data.ParseWindow(w.RunFlags())
	if err != nil {
		return nil, usage(err)
	}
	var set *data.Set
	if len(sd.sess.opts.Data) == 0 {
		set, err = data.Sample(win)
	} else {
		set, err = data.Open(ctx, sd.sess.opts.Data, data.Options{Window: win, Budget: sd.sess.budget, Timeframe: sd.sess.opts.Timeframe})
	}
	if err != nil {
		return nil, dataError(err)
	}
	sd.windows[w.String()] = set
	return set, nil
}

// driver builds a market over the sweep's window, or over w.
func (sd *sweepData) driver(ctx context.Context, w *sweep.Window) (*backtest.Driver, error) {
	set, err := sd.set(ctx, w)
	if err != nil {
		return nil, err
	}
	d, err := backtest.NewDriver(set, sd.market)
	if err != nil {
		return nil, usage(err)
	}
	return d, nil
}

// close closes the folds' sets (the session closes its own).
func (sd *sweepData) close() {
	sd.mu.Lock()
	defer sd.mu.Unlock()
	for k, set := range sd.windows {
		set.Close()
		delete(sd.windows, k)
	}
}

// fingerprint identifies the data the sweep's runs read (a resume refuses
// it changed): the digest of the bars of the sweep's window.
func (sd *sweepData) fingerprint(ctx context.Context) (string, error) {
	return sd.base.Digest(ctx)
}

// info is the source and the first and last bar of the sweep's window, as
// a job report's "data" has them.
func (sd *sweepData) info() (source, from, to string) {
	in := sd.base.Info()
	if in.Events > 0 {
		from, to = in.From.UTC().Format(time.RFC3339Nano), in.To.UTC().Format(time.RFC3339Nano)
	}
	return in.Source, from, to
}

// maxGaps bounds the bars read to find the bar interval.
const maxGaps = 100_000

// bars describes the sweep's window for walk-forward folds: its first and
// last bar and the bar interval (the median gap between distinct
// timestamps of the first bars, as the metrics' bar_interval_s).
func (sd *sweepData) bars(ctx context.Context) (sweep.Bars, error) {
	in := sd.base.Info()
	if in.Events == 0 {
		return sweep.Bars{}, nil
	}
	st, err := sd.base.Stream(ctx)
	if err != nil {
		return sweep.Bars{}, usage(err)
	}
	defer st.Close()
	b, _, err := st.Fill(min(int(in.Events), maxGaps+1))
	if err != nil {
		return sweep.Bars{}, usage(err)
	}
	var gaps []int64
	for i := 1; i < b.Len() && len(gaps) < maxGaps; i++ {
		if g := b.Time[i] - b.Time[i-1]; g > 0 {
			gaps = append(gaps, g)
		}
	}
	var interval time.Duration
	if len(gaps) > 0 {
		slices.Sort(gaps)
		interval = time.Duration(gaps[len(gaps)/2])
	}
	return sweep.Bars{First: in.From.UTC(), Last: in.To.UTC(), Interval: interval}, nil
}

// checkFoldWindows feeds check the time of every bar of the sweep's data,
// in order, until no later bar can change its answer, and returns its
// answer: a fold window without bars is refused before any run, rather
// than failing the sweep when its run cannot open its data (and every
// resume after it). It reads the data once more: a walk-forward only.
func (sd *sweepData) checkFoldWindows(ctx context.Context, check *sweep.WindowCheck) error {
	st, err := sd.base.Stream(ctx)
	if err != nil {
		return usage(err)
	}
	defer st.Close()
	for pos, n := 0, st.Events(); pos < n && !check.Done(); {
		b, first, err := st.Fill(pos + foldCheckBars)
		if err != nil {
			return usage(err)
		}
		if first+b.Len() <= pos {
			break // nothing more to read
		}
		for _, t := range b.Time[pos-first:] {
			check.See(t)
		}
		pos = first + b.Len()
		st.Release(pos)
	}
	return check.Err()
}

// foldCheckBars is how many bars checkFoldWindows asks the data for at a
// time.
const foldCheckBars = 1 << 16

// jobStarter starts the jobs of one sweep: from warm workers its slots
// share (*engine.Pool), or each as engine.Start does (a cold start).
type jobStarter interface {
	Start(ctx context.Context, cfg engine.Config, d contract.Driver) (*engine.Job, error)
	// Warm gets ready for the first jobs ahead of them, in the background.
	Warm()
	// Close ends what the starter keeps between jobs; the jobs it started
	// have ended. A second Close does nothing.
	Close()
	// ColdReason says why every job starts cold (engine.PoolStats'
	// ColdReason), or "" while jobs may start warm.
	ColdReason() string
}

// newJobStarter returns how a sweep's runs start: from warm templates, one
// for every few slots (engine.Pool, which starts a run cold where it
// cannot: under the sandbox, without PID namespaces, when a template
// fails). cfg is what every run has but its params and sweep tag, slots the
// runs at once.
func newJobStarter(cfg engine.Config, slots int) jobStarter {
	pool, err := engine.NewPool(cfg, slots)
	if err != nil {
		return coldStarts{} // each run's engine.Start says what is wrong
	}
	return poolStarter{pool}
}

// poolStarter starts jobs from an engine.Pool.
type poolStarter struct{ *engine.Pool }

func (p poolStarter) ColdReason() string { return p.Stats().ColdReason }

// coldStarts starts every job as engine.Start does.
type coldStarts struct{}

func (coldStarts) Start(ctx context.Context, cfg engine.Config, d contract.Driver) (*engine.Job, error) {
	return engine.Start(ctx, cfg, d)
}

func (coldStarts) Warm() {}

func (coldStarts) Close() {}

func (coldStarts) ColdReason() string { return "" }

// runStarter starts a sweep's runs as ordinary jobs through a jobStarter,
// exactly as --ci starts one but for the sweep's tag in its report. It is
// the one place that knows how a run starts (sweep.Starter).
type runStarter struct {
	// start starts one job: engine.Start (cold), or a warm pool's Start.
	start   func(context.Context, engine.Config, contract.Driver) (*engine.Job, error)
	sess    *session
	data    *sweepData
	sweepID string
	sha256  string            // the strategy's content when the sweep started
	env     map[string]string // the workers' extra environment
	lost    *lostJobs         // the jobs lost with their warm template; nil: not noted
}

// Start starts the item's run as a job.
func (r *runStarter) Start(ctx context.Context, it sweep.Item) (sweep.Started, error) {
	job, err := r.startJob(ctx, it)
	if err != nil {
		return nil, err
	}
	return &startedJob{ctx: ctx, sha256: r.sha256, lost: r.lost, job: job,
		restart: func() (runJob, error) {
			job, err := r.startJob(ctx, it)
			if err != nil {
				return nil, err // not a runJob holding a nil *engine.Job
			}
			return job, nil
		}}, nil
}

// startJob starts one job of the item's run.
func (r *runStarter) startJob(ctx context.Context, it sweep.Item) (*engine.Job, error) {
	d, err := r.data.driver(ctx, it.Window)
	if err != nil {
		return nil, err
	}
	tag := &job.SweepTag{ID: r.sweepID, Index: it.Combination.Index, Fold: it.Fold, Phase: string(it.Phase)}
	return r.start(ctx, engine.Config{
		Strategy: r.sess.strategy,
		Python:   r.sess.python,
		Params:   it.Args,
		Home:     r.sess.store.Home(),
		Limits:   job.DefaultLimits(),
		Sandbox:  r.sess.sandbox,
		Version:  Version,
		Host:     r.sess.host,
		Env:      r.env,
		Sweep:    tag,
	}, d)
}

// lostRetries is how many times a run whose job was lost with the warm
// template it was forked from (engine.Job.LostWithTemplate) starts again,
// as a new job: that loss is not the run's own failure, and its crash
// would otherwise stand as the combination's result for good (a resume
// runs only what has no result). A few times only, so that a template
// that keeps ending (the kernel's out-of-memory killer choosing it, say)
// cannot hold a slot forever: the last loss is recorded as the crash its
// report says it is.
const lostRetries = 2

// errLostStopping is startedJob.wait's error for a run whose job was lost
// with its warm template while the run was being stopped, or killed: it
// has no result (a resume runs it again), and its lost job stays as a
// failed job of the store.
var errLostStopping = errors.New("the run was lost with its warm template while it was being stopped")

// lostJobs are the jobs of a sweep's runs that were lost with their warm
// template and started again. Its methods are safe for concurrent use;
// a nil *lostJobs notes nothing.
type lostJobs struct {
	mu  sync.Mutex
	ids []string
}

func (l *lostJobs) add(id string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ids = append(l.ids, id)
}

// notice is what the sweep says of them at its end, or "" when there were
// none: what happened first, since the sweep view's footer cuts it at the
// terminal's width (74 characters before the parenthesis, for one job).
func (l *lostJobs) notice() string {
	if l == nil {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch len(l.ids) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("job %s was lost with its warm template and ran again (not the run's own failure)", l.ids[0])
	}
	shown := l.ids[:min(len(l.ids), 5)]
	more := ""
	if len(l.ids) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(l.ids)-len(shown))
	}
	return fmt.Sprintf("%d jobs were lost with their warm template and ran again (not the runs' own failure): %s%s",
		len(l.ids), strings.Join(shown, ", "), more)
}

// runJob is what startedJob needs of a job: *engine.Job.
type runJob interface {
	ID() string
	Dir() string
	Stop()
	Wait() (*job.Report, error)
	LostWithTemplate() bool
}

// startedJob is a run in flight: its latest job.
type startedJob struct {
	ctx     context.Context
	sha256  string
	restart func() (runJob, error) // starts the run again, as a new job
	lost    *lostJobs              // where a job lost and started again is noted

	mu      sync.Mutex
	job     runJob   // the run's latest job
	stopped bool     // Stop was called
	dropped []string // the folders of the run's lost jobs that its result does not come from
}

func (s *startedJob) Stop() {
	s.mu.Lock()
	s.stopped = true
	job := s.job
	s.mu.Unlock()
	job.Stop()
}

// wait waits for the run's end and returns its latest job's report, as
// engine.Job.Wait does. A job lost with its warm template starts again, up
// to lostRetries times; the last loss is the run's result. A job lost while
// the run was being stopped or killed is no result: wait returns
// errLostStopping. A restart that fails ends the run with its error, as a
// start that fails does (the sweep ends with it).
func (s *startedJob) wait() (*job.Report, error) {
	for retries := 0; ; retries++ {
		s.mu.Lock()
		job := s.job
		s.mu.Unlock()
		rep, err := job.Wait()
		if rep == nil || !job.LostWithTemplate() {
			return rep, err
		}
		s.mu.Lock()
		stopped := s.stopped
		s.mu.Unlock()
		if stopped || s.ctx.Err() != nil {
			s.drop(job)
			return nil, fmt.Errorf("job %s: %w", job.ID(), errLostStopping)
		}
		if retries == lostRetries {
			return rep, err
		}
		next, err := s.restart()
		if err != nil {
			return nil, fmt.Errorf("starting the run again after job %s was lost with its warm template: %w", job.ID(), err)
		}
		s.lost.add(job.ID())
		s.drop(job)
		s.mu.Lock()
		s.job = next
		stopped = s.stopped
		s.mu.Unlock()
		if stopped {
			next.Stop() // a Stop that reached the lost job only
		}
	}
}

// drop notes that the run's result does not come from job.
func (s *startedJob) drop(job runJob) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropped = append(s.dropped, job.Dir())
}

// droppedDirs returns the folders of the run's lost jobs that its result
// does not come from.
func (s *startedJob) droppedDirs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.dropped)
}

// Wait waits for the run's end and turns its report into the run's result.
func (s *startedJob) Wait() (sweep.Result, error) {
	rep, err := s.wait()
	if errors.Is(err, errLostStopping) {
		return sweep.Result{}, sweep.ErrRunStopped
	}
	if rep == nil {
		return sweep.Result{}, err
	}
	// A job whose folder could not be written in full still has its
	// report: the result is kept (the report lists what was not saved).
	if err != nil && !errors.As(err, new(*engine.SaveError)) {
		return sweep.Result{}, err
	}
	if err := sameStrategy(rep, s.sha256); err != nil {
		return sweep.Result{}, err
	}
	return resultOf(rep)
}

// errStrategyChanged is why a sweep ends when one of its runs ran other
// content of the strategy than the sweep started with: the strategy was
// saved during the sweep. In the sweep view that save starts the sweep
// again, as every save there does; elsewhere the sweep ends with it.
var errStrategyChanged = errors.New("the strategy changed during the sweep")

// sameStrategy says whether the job ran the strategy content (sha256) its
// sweep started with.
func sameStrategy(rep *job.Report, sha256 string) error {
	if rep.Strategy.SHA256 != sha256 {
		return fmt.Errorf("%w (job %s ran sha256 %.12s…): its runs would not be comparable; start a new sweep",
			errStrategyChanged, rep.JobID, rep.Strategy.SHA256)
	}
	return nil
}

// resultOf is the sweep result of a finished job's report; a stopped job
// has none.
func resultOf(rep *job.Report) (sweep.Result, error) {
	res := sweep.Result{JobID: rep.JobID, Fingerprint: rep.Fingerprint, OrdersHash: rep.OrdersHash, DurationMS: rep.DurationMS}
	switch rep.Status {
	case job.StatusStopped:
		return sweep.Result{}, sweep.ErrRunStopped
	case job.StatusPassed:
		res.Status = sweep.RunPassed
	default:
		res.Status = sweep.RunFailed
		res.FailureKind = "crash"
		if rep.Failure != nil && rep.Failure.Kind != "" {
			res.FailureKind = string(rep.Failure.Kind)
		}
	}
	if rep.Metrics != nil {
		m, err := json.Marshal(rep.Metrics)
		if err != nil {
			return sweep.Result{}, fmt.Errorf("job %s: metrics: %w", rep.JobID, err)
		}
		res.Metrics = m
	}
	return res, nil
}
