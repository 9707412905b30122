package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"stratbench/backtest"
	"stratbench/contract"
	"stratbench/engine"
	"stratbench/sweep"
)

// sweepData is the data of a sweep, loaded once and shared by its runs:
// each run gets a market of its own (a backtest.Driver) over the shared
// columns, for the sweep's window or its fold's.
type sweepData struct {
	data   *backtest.Data
	window backtest.Window // --from and --to
	market backtest.Options
}

// loadSweepData loads the session's data once, as session.driver does for
// one run (the bundled sample, or --data through the session's cache), and
// checks that the sweep's window has bars.
func loadSweepData(s *session) (*sweepData, error) {
	var data *backtest.Data
	if s.opts.Data == "" {
		data = backtest.Sample()
	} else {
		d, err := s.cache.Load(s.opts.Data)
		if err != nil {
			return nil, usage(err)
		}
		data = d
	}
	sd := &sweepData{data: data, window: s.window, market: s.opts.market()}
	if _, err := sd.driver(nil); err != nil {
		return nil, err
	}
	return sd, nil
}

// driver builds a market over the sweep's window, or over w (a fold's
// half-open window, replayed as the --from and --to that w.RunFlags
// gives, so that the run is exactly the --ci run with those flags).
func (sd *sweepData) driver(w *sweep.Window) (*backtest.Driver, error) {
	window := sd.window
	if w != nil {
		from, to := w.RunFlags()
		var err error
		if window, err = backtest.ParseWindow(from, to); err != nil {
			return nil, usage(err)
		}
	}
	d, err := backtest.NewDriver(sd.data, window, sd.market)
	if err != nil {
		return nil, usage(err)
	}
	return d, nil
}

// fingerprint identifies the data the sweep's runs read: the hash of the
// bars in the sweep's window (a resume refuses it changed).
func (sd *sweepData) fingerprint() string {
	d, err := sd.driver(nil)
	if err != nil {
		return ""
	}
	return d.Setup().DataHash
}

// info is the report's "data" of the sweep's window.
func (sd *sweepData) info() (source, from, to string) {
	d, err := sd.driver(nil)
	if err != nil {
		return "", "", ""
	}
	in := d.Setup().Data
	return in.Source, in.From, in.To
}

// bars describes the sweep's window for walk-forward folds: its first and
// last bar and the bar interval (the median gap between distinct
// timestamps, as the metrics' bar_interval_s).
func (sd *sweepData) bars() sweep.Bars {
	times := sd.data.Bars().Time
	lo, hi := 0, len(times)
	if !sd.window.From.IsZero() {
		from := sd.window.From.UnixNano()
		lo, _ = slices.BinarySearch(times, from)
	}
	if !sd.window.To.IsZero() {
		to := sd.window.To.UnixNano()
		hi, _ = slices.BinarySearch(times, to+1)
	}
	if hi <= lo {
		return sweep.Bars{}
	}
	var gaps []int64
	for i := lo + 1; i < hi && len(gaps) < 100_001; i++ {
		if g := times[i] - times[i-1]; g > 0 {
			gaps = append(gaps, g)
		}
	}
	var interval time.Duration
	if len(gaps) > 0 {
		slices.Sort(gaps)
		interval = time.Duration(gaps[len(gaps)/2])
	}
	return sweep.Bars{First: time.Unix(0, times[lo]).UTC(), Last: time.Unix(0, times[hi-1]).UTC(), Interval: interval}
}

// jobStarter starts the jobs of one sweep: from a warm worker per slot
// (*engine.Pool), or each as engine.Start does (a cold start).
type jobStarter interface {
	Start(ctx context.Context, cfg engine.Config, d contract.Driver) (*engine.Job, error)
	// Close ends what the starter keeps between jobs; the jobs it started
	// have ended.
	Close()
}

// newJobStarter returns how a sweep's runs start: from a warm template per
// slot (engine.Pool, which starts a run cold where it cannot: under the
// sandbox, without PID namespaces, when a template fails). cfg is what
// every run has but its params and sweep tag, slots the runs at once.
func newJobStarter(cfg engine.Config, slots int) jobStarter {
	pool, err := engine.NewPool(cfg, slots)
	if err != nil {
		return coldStarts{} // each run's engine.Start says what is wrong
	}
	return pool
}

// coldStarts starts every job as engine.Start does.
type coldStarts struct{}

func (coldStarts) Start(ctx context.Context, cfg engine.Config, d contract.Driver) (*engine.Job, error) {
	return engine.Start(ctx, cfg, d)
}

func (coldStarts) Close() {}

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
}

// Start starts the item's run as a job.
func (r *runStarter) Start(ctx context.Context, it sweep.Item) (sweep.Started, error) {
	d, err := r.data.driver(it.Window)
	if err != nil {
		return nil, err
	}
	tag := &engine.SweepTag{ID: r.sweepID, Index: it.Combination.Index, Fold: it.Fold, Phase: string(it.Phase)}
	job, err := r.start(ctx, engine.Config{
		Strategy: r.sess.strategy,
		Python:   r.sess.python,
		Params:   it.Args,
		Home:     r.sess.store.Home(),
		Limits:   engine.DefaultLimits(),
		Sandbox:  r.sess.sandbox,
		Version:  Version,
		Host:     r.sess.host,
		Env:      r.env,
		Sweep:    tag,
	}, d)
	if err != nil {
		return nil, err
	}
	return &startedJob{job: job, sha256: r.sha256}, nil
}

// startedJob is a run in flight: an engine job.
type startedJob struct {
	job    *engine.Job
	sha256 string
}

func (s *startedJob) Stop() { s.job.Stop() }

// Wait waits for the job and turns its report into the run's result.
func (s *startedJob) Wait() (sweep.Result, error) {
	rep, err := s.job.Wait()
	if rep == nil {
		return sweep.Result{}, err
	}
	// A job whose folder could not be written in full still has its
	// report: the result is kept (the report lists what was not saved).
	if err != nil && !errors.As(err, new(*engine.SaveError)) {
		return sweep.Result{}, err
	}
	if rep.Strategy.SHA256 != s.sha256 {
		return sweep.Result{}, fmt.Errorf("the strategy changed during the sweep (job %s ran sha256 %.12s…): its runs would not be comparable; start a new sweep",
			rep.JobID, rep.Strategy.SHA256)
	}
	return resultOf(rep)
}

// resultOf is the sweep result of a finished job's report; a stopped job
// has none.
func resultOf(rep *engine.Report) (sweep.Result, error) {
	res := sweep.Result{JobID: rep.JobID, Fingerprint: rep.Fingerprint, OrdersHash: rep.OrdersHash, DurationMS: rep.DurationMS}
	switch rep.Status {
	case engine.StatusStopped:
		return sweep.Result{}, sweep.ErrRunStopped
	case engine.StatusPassed:
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
