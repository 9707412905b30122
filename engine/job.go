package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"stratbench/contract"
	"stratbench/job"
	"stratbench/supervisor"
)

// Config is everything a job needs besides its driver.
type Config struct {
	Strategy string       // path of strategy.py
	Python   *Interpreter // from FindPython
	Params   []string     // --param k=v, in the order given
	Home     string       // $STRATBENCH_HOME: jobs/ lives here
	CacheDir string       // where the bridge is installed (default: the user cache folder)
	Limits   job.Limits   // DefaultLimits() unless a test shortens them
	Sandbox  bool         // run the worker in the sandbox
	Version  string       // stratbench version, for the fingerprint
	Host     *supervisor.Host
	Env      map[string]string // extra environment for the worker
	Sweep    *job.SweepTag     // the report's "sweep" tag for a sweep's run; nil for a job of its own
	// Debug, when set, makes breakpoint() stop the worker at a prompt
	// answered through the Job (job.DebugConsole): the workbench's. Nil
	// (--ci, a sweep, Ray), breakpoint() writes one notice and goes on.
	Debug *Debug
	// BindMounts are files the worker's tree sees in place of others
	// (supervisor.Spec.BindMounts): `stratbench check`'s cut data files.
	BindMounts []supervisor.BindMount
	// Ended, when set, is called with the job's id in the job's goroutine
	// once its final report is saved and its events have ended, before
	// Done is closed: where the home's retention runs (app).
	Ended func(id string)
	// Hold keeps the job folder held (job.Hold) after the job ends, until
	// Release: the command still uses the job (prints it, writes its
	// report, shows it). Without it the hold ends with the run. Either
	// way no retention or prune removes the folder while it is held.
	Hold bool
}

// Job is one run of a strategy.
type Job struct {
	id, dir string
	cfg     Config
	driver  contract.Driver
	source  []byte // the strategy file as it was when the job started
	bridge  string // the bridge's path, once the worker was started
	pub     *publisher
	ctx     context.Context // the job's context: event delivery ends with it

	stopOnce sync.Once
	mu       sync.Mutex
	stopping bool    // Stop was called; guarded by mu
	worker   *worker // the worker while it runs; guarded by mu

	// The job folder's safeguards against a full disk: room kept for the
	// final report, and what could not be written so far.
	reserve    *reserve
	saveErrors []string

	warm *warmLauncher // the Pool's slot that forks the worker; nil: a cold start

	// hold is the job folder's, from its creation; holders counts the
	// run and, with Config.Hold, the caller until Release: the last
	// to let go releases it.
	hold        *job.Hold
	holders     atomic.Int32
	releaseOnce sync.Once

	done   chan struct{}
	report *job.Report
	err    error
	// lostWithTemplate: see LostWithTemplate. Written before done is
	// closed.
	lostWithTemplate bool
	// batches is how many batch requests the worker answered, aheads
	// how many of them it was sent ahead, joined how many of those
	// joined the bars it held to the driver's next (tests).
	batches, aheads, joined int
}

// Start creates the job folder, starts the run in the background and returns
// at once; the run reports on Events. A *UsageError means the job could not
// start because of what the user asked for. Cancelling ctx kills the worker's
// tree at once: the job is then saved as stopped without running on_finish.
func Start(ctx context.Context, cfg Config, d contract.Driver) (*Job, error) {
	return start(ctx, cfg, d, nil)
}

// start is Start, with the worker forked from a Pool's template when warm
// is not nil.
func start(ctx context.Context, cfg Config, d contract.Driver, warm *warmLauncher) (*Job, error) {
	if cfg.Python == nil || cfg.Host == nil {
		return nil, errors.New("engine: Config.Python and Config.Host are required")
	}
	if cfg.Limits == (job.Limits{}) {
		cfg.Limits = job.DefaultLimits()
	}
	cfg.Limits = withDiskDefaults(cfg.Limits)
	path, err := filepath.Abs(cfg.Strategy)
	if err != nil {
		return nil, &UsageError{fmt.Errorf("strategy %s: %w", cfg.Strategy, err)}
	}
	// The run uses the real file: its folder is what Python puts first on
	// sys.path (a sibling module imports from beside the real file) and
	// what the sandbox grants, and the report names it.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	cfg.Strategy = path
	source, err := os.ReadFile(path)
	if err != nil {
		return nil, &UsageError{fmt.Errorf("strategy: %w", err)}
	}
	store, err := job.OpenStore(cfg.Home)
	if err != nil {
		return nil, err
	}
	id, hold, err := newJobDir(store, time.Now())
	if err != nil {
		return nil, err
	}
	j := &Job{id: id, dir: hold.Path(), cfg: cfg, driver: d, source: source, pub: newPublisher(id), ctx: ctx, done: make(chan struct{}), warm: warm, hold: hold}
	j.holders.Store(1)
	if cfg.Hold {
		j.holders.Add(1)
	}
	go j.run(ctx)
	return j, nil
}

// withDiskDefaults fills the disk caps left at zero with their defaults.
func withDiskDefaults(l job.Limits) job.Limits {
	d := job.DefaultLimits()
	orDefault(&l.RecordBytes, d.RecordBytes)
	orDefault(&l.LogFileBytes, d.LogFileBytes)
	orDefault(&l.ArtifactFileBytes, d.ArtifactFileBytes)
	orDefault(&l.ArtifactsBytes, d.ArtifactsBytes)
	orDefault(&l.ArtifactsCheck, d.ArtifactsCheck)
	orDefault(&l.SandboxTmpBytes, d.SandboxTmpBytes)
	orDefault(&l.DevShmBytes, d.DevShmBytes)
	orDefault(&l.DebugIdle, d.DebugIdle)
	return l
}

// orDefault sets *v to def when it is zero or less.
func orDefault[T ~int64](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// limitsReport is the limits block of the report of a job run under l.
func limitsReport(l job.Limits) job.LimitsReport {
	return job.LimitsReport{
		StartupS:     l.Startup.Seconds(),
		OnDataS:      l.OnData.Seconds(),
		OnExecutionS: l.OnExecution.Seconds(),
		OnFinishS:    l.OnFinish.Seconds(),
		MemoryBytes:  l.MemoryBytes,
		Processes:    l.Processes,
		Tasks:        l.Tasks,
		MessageBytes: l.MessageBytes,
		LogBytes:     l.LogBytes,
	}
}

func newJobID(t time.Time) string {
	var b [2]byte
	rand.Read(b[:])
	return t.UTC().Format("20060102-150405.000") + "-" + hex.EncodeToString(b[:])
}

// newJobDir creates the folder of a new job in s, held (job.Hold) before
// anything is written in it, its artifacts folder (the strategy's) and
// its records folder (stratbench's: a job folder without one is an older
// version's, see job.OpenRecordIn); a folder that exists already is never
// reused.
func newJobDir(s *job.Store, t time.Time) (id string, hold *job.Hold, err error) {
	for range 8 {
		id = newJobID(t)
		dir := s.JobDir(id)
		if err = os.Mkdir(dir, 0o755); errors.Is(err, fs.ErrExist) {
			continue
		}
		if err == nil {
			hold, err = job.HoldFolder(dir)
		}
		if err == nil {
			err = os.Mkdir(filepath.Join(dir, "artifacts"), 0o755)
		}
		if err == nil {
			err = os.Mkdir(filepath.Join(dir, job.RecordsDir), 0o755)
		}
		if err != nil {
			if hold != nil {
				os.RemoveAll(dir)
				hold.Release()
			}
			return "", nil, fmt.Errorf("create job folder: %w", err)
		}
		return id, hold, nil
	}
	return "", nil, fmt.Errorf("create job folder: %w", err)
}

// Release says the caller no longer uses the job (Config.Hold): its
// folder's hold ends, or ends with the run if it still runs. Further
// calls, and calls without Config.Hold, do nothing.
func (j *Job) Release() {
	if j.cfg.Hold {
		j.releaseOnce.Do(j.letGo)
	}
}

// letGo drops one of the hold's holders; the last releases it.
func (j *Job) letGo() {
	if j.holders.Add(-1) == 0 {
		j.hold.Release()
	}
}

// ID returns the job id.
func (j *Job) ID() string { return j.id }

// Dir returns the job folder.
func (j *Job) Dir() string { return j.dir }

// Events returns the job's event stream, from its first event (JobStarted)
// to its last (Finished), after which it is closed. It may be called at any
// time, before or after Wait: until it is, the events wait in memory,
// coalesced (the newest sample, progress and statistics; a bounded tail of
// the log), so a job nobody listens to costs little and loses nothing a
// late listener needs. A listener reads until the channel is closed, or
// ends the job's context; every call returns the same channel.
func (j *Job) Events() <-chan job.Event { return j.pub.subscribe(j.ctx) }

// Done is closed when the job has ended and its final report is written.
func (j *Job) Done() <-chan struct{} { return j.done }

// Stop asks the job to stop: the hook in flight completes, on_finish runs,
// the worker exits and the job is saved with status "stopped".
func (j *Job) Stop() {
	j.stopOnce.Do(func() {
		j.mu.Lock()
		defer j.mu.Unlock()
		j.stopping = true
		if j.worker != nil {
			j.worker.requestStop()
		}
	})
}

// setWorker makes w the worker that Stop reaches (nil once it is closed),
// and passes on a stop requested before it started.
func (j *Job) setWorker(w *worker) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.worker = w
	if w != nil && j.stopping {
		w.requestStop()
	}
}

// runningWorker returns the worker while it runs, or nil.
func (j *Job) runningWorker() *worker {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.worker
}

// LostWithTemplate waits for the job to end and says whether it failed only
// because the warm template its worker was forked from (Pool) ended while
// the run was in flight: the run's PID namespace lies within the
// template's, so the kernel killed the run with it, through nothing the
// strategy did (the template ended by a kill from outside, say, or the
// kernel's out-of-memory killer). The report records a crash that says
// so; the same run started again would not meet it. A job that failed on
// its own first, or started cold, is not lost.
func (j *Job) LostWithTemplate() bool {
	<-j.done
	return j.lostWithTemplate
}

// Wait waits for the job to end and returns its final report (also in
// job.json). The error is non-nil when the job could not run at all (a
// *UsageError; the report is then nil) or its folder could not be written
// in full (a *SaveError; the report, kept in memory, is complete and lists
// the same in SaveErrors).
func (j *Job) Wait() (*job.Report, error) {
	<-j.done
	return j.report, j.err
}
