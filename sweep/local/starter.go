package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"stratbench/engine"
	"stratbench/internal/termtext"
	"stratbench/job"
	"stratbench/sweep"
)

// Starter starts a sweep's runs as ordinary jobs, exactly as --ci starts
// one but for the sweep's tag in its report, from warm templates one for
// every few slots (engine.Pool, which starts a run cold where it cannot:
// under the sandbox, without PID namespaces, when a template fails). It is
// the one place that knows how a run starts (sweep.Starter); a run in
// flight is a *Run.
type Starter struct {
	cfg  engine.Config // every run's, but its params and sweep tag
	pool *engine.Pool  // nil: each run starts cold, as engine.Start does
	lost lostJobs      // the jobs lost with their warm template and started again

	// What Use sets, before the first run.
	data    *Data
	sweepID string
	sha256  string // the strategy's content when the sweep started
}

// NewStarter returns the starter of runs of cfg (every run's Config but
// its params and sweep tag) on slots slots at once. Its templates start
// with the first runs of their slots, or all at once with Warm; Close ends
// them.
func NewStarter(cfg engine.Config, slots int) *Starter {
	s := &Starter{cfg: cfg}
	if pool, err := engine.NewPool(cfg, slots); err == nil {
		s.pool = pool // else each run's engine.Start says what is wrong
	}
	return s
}

// Warm starts the templates ahead of the first runs, in the background.
func (s *Starter) Warm() {
	if s.pool != nil {
		s.pool.Warm()
	}
}

// Use makes the runs those of sweep sweepID, whose strategy had the
// content sha256 when it started, on data. Call it before the first
// Start.
func (s *Starter) Use(data *Data, sweepID, sha256 string) {
	s.data, s.sweepID, s.sha256 = data, sweepID, sha256
}

// Start starts the item's run as a job (sweep.Starter).
func (s *Starter) Start(ctx context.Context, it sweep.Item) (sweep.Started, error) {
	return s.StartRun(ctx, it)
}

// StartRun starts the item's run as a job.
func (s *Starter) StartRun(ctx context.Context, it sweep.Item) (*Run, error) {
	job, err := s.startJob(ctx, it)
	if err != nil {
		return nil, err
	}
	return &Run{ctx: ctx, sha256: s.sha256, lost: &s.lost, job: job,
		restart: func() (runJob, error) {
			job, err := s.startJob(ctx, it)
			if err != nil {
				return nil, err // not a runJob holding a nil *engine.Job
			}
			return job, nil
		}}, nil
}

// startJob starts one job of the item's run.
func (s *Starter) startJob(ctx context.Context, it sweep.Item) (*engine.Job, error) {
	d, err := s.data.Driver(ctx, it.Window)
	if err != nil {
		return nil, err
	}
	cfg := s.cfg
	cfg.Params = it.Args
	cfg.Sweep = &job.SweepTag{ID: s.sweepID, Index: it.Combination.Index, Fold: it.Fold, Phase: string(it.Phase)}
	if s.pool == nil {
		return engine.Start(ctx, cfg, d)
	}
	return s.pool.Start(ctx, cfg, d)
}

// Notices says what the sweep tells the user of how its runs started
// (none, one line each): which jobs were lost with their template and
// started again, and why the runs started cold (an interpreter each
// instead of a fork of a warm template).
func (s *Starter) Notices() []string {
	var notices []string
	if n := s.lost.notice(); n != "" {
		notices = append(notices, n)
	}
	if s.pool != nil {
		st := s.pool.Stats()
		switch {
		case st.ColdReason != "":
			notices = append(notices, coldNotice(st.ColdReason))
		case st.Cold > 0 && st.LastColdReason != "":
			// Some runs only: a template refused a fork (a file its
			// imports read changed meanwhile) or ended. Their results are
			// a cold start's, as --ci's; the user still hears why.
			notices = append(notices, termtext.Line(fmt.Sprintf("%d of this sweep's runs started cold, an interpreter each (the last because %s)",
				st.Cold, st.LastColdReason)))
		}
	}
	return notices
}

// coldNotice is what a sweep says when its runs started cold, on one line
// with no control characters: why may quote a template's output.
func coldNotice(why string) string {
	return termtext.Line("this sweep's runs started cold, an interpreter each: " + why)
}

// Close ends the warm templates; the runs started have ended. A second
// Close does nothing.
func (s *Starter) Close() {
	if s.pool != nil {
		s.pool.Close()
	}
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

// ErrLostStopping is Run.Report's error for a run whose job was lost
// with its warm template while the run was being stopped, or killed: it
// has no result (a resume runs it again), and its lost job stays as a
// failed job of the store.
var ErrLostStopping = errors.New("the run was lost with its warm template while it was being stopped")

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

// runJob is what Run needs of a job: *engine.Job.
type runJob interface {
	ID() string
	Dir() string
	Stop()
	Wait() (*job.Report, error)
	LostWithTemplate() bool
}

// Run is a run in flight: its latest job.
type Run struct {
	ctx     context.Context
	sha256  string
	restart func() (runJob, error) // starts the run again, as a new job
	lost    *lostJobs              // where a job lost and started again is noted

	mu      sync.Mutex
	job     runJob   // the run's latest job
	stopped bool     // Stop was called
	dropped []string // the folders of the run's lost jobs that its result does not come from
}

// Stop asks the run to stop (sweep.Started): on_finish runs.
func (s *Run) Stop() {
	s.mu.Lock()
	s.stopped = true
	job := s.job
	s.mu.Unlock()
	job.Stop()
}

// Report waits for the run's end and returns its latest job's report, as
// engine.Job.Wait does. A job lost with its warm template starts again, up
// to lostRetries times; the last loss is the run's result. A job lost while
// the run was being stopped or killed is no result: Report returns
// ErrLostStopping. A restart that fails ends the run with its error, as a
// start that fails does (the sweep ends with it).
func (s *Run) Report() (*job.Report, error) {
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
			return nil, fmt.Errorf("job %s: %w", job.ID(), ErrLostStopping)
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
func (s *Run) drop(job runJob) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropped = append(s.dropped, job.Dir())
}

// Dropped returns the folders of the run's lost jobs that its result
// does not come from.
func (s *Run) Dropped() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.dropped)
}

// Wait waits for the run's end and turns its report into the run's result.
func (s *Run) Wait() (sweep.Result, error) {
	rep, err := s.Report()
	if errors.Is(err, ErrLostStopping) {
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
	return ResultOf(rep, s.sha256)
}

// ResultOf is the sweep result of a finished job's report, a run of a
// sweep whose strategy had the content sha256 when it started: an error
// wrapping ErrStrategyChanged when the job ran other content, and
// sweep.ErrRunStopped for a stopped job, which has none.
func ResultOf(rep *job.Report, sha256 string) (sweep.Result, error) {
	if err := sameStrategy(rep, sha256); err != nil {
		return sweep.Result{}, err
	}
	return resultOf(rep)
}

// ErrStrategyChanged is why a sweep ends when one of its runs ran other
// content of the strategy than the sweep started with: the strategy was
// saved during the sweep. In the sweep view that save starts the sweep
// again, as every save there does; elsewhere the sweep ends with it.
var ErrStrategyChanged = errors.New("the strategy changed during the sweep")

// sameStrategy says whether the job ran the strategy content (sha256) its
// sweep started with.
func sameStrategy(rep *job.Report, sha256 string) error {
	if rep.Strategy.SHA256 != sha256 {
		return fmt.Errorf("%w (job %s ran sha256 %.12s…): its runs would not be comparable; start a new sweep",
			ErrStrategyChanged, rep.JobID, rep.Strategy.SHA256)
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
