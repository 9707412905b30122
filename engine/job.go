package engine

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"stratbench/contract"
	"stratbench/internal/atomicfile"
	"stratbench/python"
	"stratbench/sandbox"
	"stratbench/supervisor"
)

// Config is everything a job needs besides its driver.
type Config struct {
	Strategy string       // path of strategy.py
	Python   *Interpreter // from FindPython
	Params   []string     // --param k=v, in the order given
	Home     string       // $STRATBENCH_HOME: jobs/ lives here
	CacheDir string       // where the bridge is installed (default: the user cache folder)
	Limits   Limits       // DefaultLimits() unless a test shortens them
	Sandbox  bool         // run the worker in the sandbox
	Version  string       // stratbench version, for the fingerprint
	Host     *supervisor.Host
	Env      map[string]string // extra environment for the worker
}

// Job is one run of a strategy.
type Job struct {
	id, dir string
	cfg     Config
	driver  contract.Driver
	source  []byte // the strategy file as it was when the job started
	pub     *publisher

	stopOnce   sync.Once
	stopping   atomic.Bool
	mu         sync.Mutex
	worker     *worker // set once started; guarded by mu
	subscribed atomic.Bool
	abandon    context.CancelFunc

	// The job folder's safeguards against a full disk: room kept for the
	// final report, and what could not be written so far.
	reserve    *reserve
	saveErrors []string

	done   chan struct{}
	report *Report
	err    error
}

// Start creates the job folder, starts the run in the background and returns
// at once; the run reports on Events. A *UsageError means the job could not
// start because of what the user asked for. Cancelling ctx kills the worker's
// tree at once: the job is then saved as stopped without running on_finish.
func Start(ctx context.Context, cfg Config, d contract.Driver) (*Job, error) {
	if cfg.Python == nil || cfg.Host == nil {
		return nil, errors.New("engine: Config.Python and Config.Host are required")
	}
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits()
	}
	cfg.Limits = cfg.Limits.withDiskDefaults()
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
	store, err := OpenStore(cfg.Home)
	if err != nil {
		return nil, err
	}
	id, dir, err := store.newJobDir(time.Now())
	if err != nil {
		return nil, err
	}
	j := &Job{id: id, dir: dir, cfg: cfg, driver: d, source: source, pub: newPublisher(id), done: make(chan struct{})}
	pubCtx, cancel := context.WithCancel(ctx)
	j.abandon = cancel
	go j.pub.run(pubCtx)
	go j.run(ctx)
	return j, nil
}

func newJobID(t time.Time) string {
	var b [2]byte
	rand.Read(b[:])
	return t.UTC().Format("20060102-150405.000") + "-" + hex.EncodeToString(b[:])
}

// newJobDir creates the folder of a new job (and its artifacts folder); a
// folder that exists already is never reused.
func (s *Store) newJobDir(t time.Time) (id, dir string, err error) {
	for range 8 {
		id = newJobID(t)
		dir = s.JobDir(id)
		if err = os.Mkdir(dir, 0o755); errors.Is(err, fs.ErrExist) {
			continue
		}
		if err == nil {
			err = os.Mkdir(filepath.Join(dir, "artifacts"), 0o755)
		}
		if err != nil {
			return "", "", fmt.Errorf("create job folder: %w", err)
		}
		return id, dir, nil
	}
	return "", "", fmt.Errorf("create job folder: %w", err)
}

// ID returns the job id.
func (j *Job) ID() string { return j.id }

// Dir returns the job folder.
func (j *Job) Dir() string { return j.dir }

// Events returns the job's event stream. It ends with Finished and is then
// closed. Call it before Wait to receive the events; a job nobody listens to
// discards them.
func (j *Job) Events() <-chan Event {
	j.subscribed.Store(true)
	return j.pub.out
}

// Done is closed when the job has ended and its final report is written.
func (j *Job) Done() <-chan struct{} { return j.done }

// Stop asks the job to stop: the hook in flight completes, on_finish runs,
// the worker exits and the job is saved with status "stopped".
func (j *Job) Stop() {
	j.stopOnce.Do(func() {
		j.stopping.Store(true)
		j.mu.Lock()
		if j.worker != nil {
			j.worker.requestStop()
		}
		j.mu.Unlock()
	})
}

// Wait waits for the job to end and returns its final report (also in
// job.json). The error is non-nil when the job could not run at all (a
// *UsageError; the report is then nil) or its folder could not be written
// in full (a *SaveError; the report, kept in memory, is complete and lists
// the same in SaveErrors).
func (j *Job) Wait() (*Report, error) {
	if !j.subscribed.Load() {
		j.abandon()
	}
	<-j.done
	return j.report, j.err
}

// run is the job's life: worker start, handshake, replay, on_finish, report.
func (j *Job) run(ctx context.Context) {
	defer close(j.done)
	setup := j.driver.Setup()
	started := time.Now()
	sum := sha256.Sum256(j.source)
	rep := &Report{
		JobID:     j.id,
		Status:    StatusRunning,
		Engine:    "python",
		Strategy:  StrategyInfo{Path: j.cfg.Strategy, SHA256: hex.EncodeToString(sum[:]), Params: map[string]any{}},
		Data:      setup.Data,
		Python:    PythonInfo{Executable: j.cfg.Python.Executable, Version: j.cfg.Python.Version, Sandbox: j.cfg.Sandbox},
		Limits:    j.cfg.Limits.report(),
		Hooks:     map[contract.Hook]Stats{contract.HookOnData: {}, contract.HookOnExecution: {}, contract.HookOnFinish: {}},
		Metadata:  json.RawMessage("null"),
		StartedAt: started.UTC(),
	}
	// The owner record says which stratbench runs the job, until the final
	// report is written: if stratbench is killed, the next one finds the job
	// ownerless and marks it failed (Store.Recover).
	if err := writeOwner(j.dir); err != nil {
		j.finish(rep, nil, err)
		return
	}
	// Room for the final report first: the disk may fill during the run.
	res, reserveErr := makeReserve(j.dir)
	j.reserve = res
	if err := writeJSONAtomic(filepath.Join(j.dir, "job.json"), rep); err != nil {
		j.finish(rep, nil, err)
		return
	}
	logs, err := openLogSink(filepath.Join(j.dir, "logs.jsonl"), j.cfg.Limits.LogFileBytes, j.pub)
	if err != nil {
		j.finish(rep, nil, err)
		return
	}
	if reserveErr != nil {
		logs.system("could not " + reserveErr.Error() + "; if the disk fills up, job.json may not be saved (the report is still printed)")
	}
	records := newJobRecords(j.dir, j.cfg.Limits.RecordBytes, logs.system)
	j.pub.milestone(JobStarted{JobID: j.id, Dir: j.dir, Strategy: j.cfg.Strategy, Sandbox: j.cfg.Sandbox,
		Limits: j.cfg.Limits, Events: setup.Data.Events, StartedAt: started})

	progress := newProgressTracker(j, setup.Data.Events)
	w, err := j.startWorker(ctx, logs, progress)
	if errors.As(err, new(*UsageError)) {
		j.refuse(logs, err) // a sandbox policy that cannot be built, say
		return
	}
	if err != nil {
		logs.close()
		j.finish(rep, nil, err)
		return
	}
	var samples sync.WaitGroup
	samples.Add(1)
	go func() {
		defer samples.Done()
		j.forwardSamples(w.proc.Samples())
	}()
	watchCtx, stopWatch := context.WithCancel(ctx)
	samples.Add(1)
	go func() {
		defer samples.Done()
		j.watchArtifacts(watchCtx, logs)
	}()

	status, failure, metadata, err := j.drive(ctx, w, setup, rep, records)
	// A Stop from now on has nothing to stop; the shared page goes away.
	j.mu.Lock()
	j.worker = nil
	j.mu.Unlock()
	stopWatch()
	result := w.close()
	os.RemoveAll(filepath.Join(j.dir, "tmp")) // the sandbox's private temporary folder
	samples.Wait()
	progress.flush()
	if err != nil {
		if errors.As(err, new(*UsageError)) {
			records.close()
			j.refuse(logs, err) // an undeclared --param, say
			return
		}
		// The driver failed on its own: record it rather than lose the run.
		failure = &contract.Failure{Kind: contract.KindCrash, Hook: contract.HookOnData, Message: "stratbench: " + err.Error()}
		status = StatusFailed
	}

	rep.Status = status
	rep.Failure = failure
	for hook, s := range w.stats {
		rep.Hooks[hook] = s.report()
	}
	rep.Resources = Resources{PeakMemoryBytes: result.PeakMemoryBytes, PeakProcesses: result.PeakProcesses,
		TreeTracking: result.TreeTracking.String()}
	rep.Logs = LogsInfo{Bytes: result.OutputBytes, Truncated: result.OutputTruncated}
	rep.CommandsDiscarded = w.discarded
	if metadata != nil {
		rep.Metadata = metadata
	}
	out := j.driver.Outcome()
	rep.OrdersHash = out.OrdersHash
	rep.Fingerprint = fingerprint(rep.Strategy.SHA256, setup.DataHash, rep.Strategy.Params, setup.Flags, j.cfg.Version)
	for _, err := range records.close() {
		j.saveErrors = append(j.saveErrors, err.Error())
	}
	// The log is complete before the final report says the job ended:
	// `logs --follow` stops at that report.
	if err := logs.close(); err != nil {
		j.saveErrors = append(j.saveErrors, err.Error())
	}
	rep.Metrics = &out.Metrics
	j.finish(rep, out.Equity, nil)
}

// refuse ends a job that could not run at all because of what the user
// asked for: no job folder is kept, and Wait returns err.
func (j *Job) refuse(logs *logSink, err error) {
	logs.close()
	if j.reserve != nil {
		j.reserve.release()
	}
	os.RemoveAll(j.dir)
	j.err = err
	j.pub.close(Finished{JobID: j.id, Err: err})
}

// drive runs the handshake, the replay and on_finish, and decides the status.
func (j *Job) drive(ctx context.Context, w *worker, setup contract.Setup, rep *Report, records contract.Records) (status Status, failure *contract.Failure, metadata json.RawMessage, err error) {
	m, err := w.handshake(ctx)
	if err != nil {
		return j.outcome(ctx, err)
	}
	params, perr := resolveParams(m.ParamDefaults, j.cfg.Params)
	if perr != nil {
		return "", nil, nil, &UsageError{perr}
	}
	rep.Strategy.Params = params
	name := ""
	if m.Name != nil {
		name = *m.Name
	}
	manifest := contract.Manifest{Name: name, Hooks: m.Hooks, Params: params, History: m.History}
	init := python.InitMsg{Params: pythonParams(params), Symbols: setup.Data.Symbols, Cash: setup.Cash,
		Artifacts: filepath.Join(j.dir, "artifacts")}
	if err := w.init(ctx, manifest, init); err != nil {
		return j.outcome(ctx, err)
	}
	rep.Python.Executable, rep.Python.Version = m.Python.Executable, m.Python.Version
	j.pub.milestone(WorkerReady{JobID: j.id, Python: rep.Python, Hooks: m.Hooks, Params: params})

	err = j.driver.Drive(ctx, w, records)
	switch {
	case err == nil, errors.Is(err, contract.ErrStopped):
		status = StatusPassed
		if err != nil {
			status = StatusStopped
		}
		metadata, ferr := w.finish(ctx)
		if ferr != nil {
			return j.outcome(ctx, ferr)
		}
		return status, nil, metadata, nil
	}
	return j.outcome(ctx, err)
}

// outcome classifies an error that ended the run.
func (j *Job) outcome(ctx context.Context, err error) (Status, *contract.Failure, json.RawMessage, error) {
	var f *contract.Failure
	switch {
	case errors.As(err, &f):
		return StatusFailed, f, nil, nil
	case ctx.Err() != nil:
		return StatusStopped, nil, nil, nil
	}
	return "", nil, nil, err
}

// startWorker starts the bridge under the supervisor.
func (j *Job) startWorker(ctx context.Context, logs *logSink, progress *progressTracker) (*worker, error) {
	cacheDir := j.cfg.CacheDir
	if cacheDir == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			cacheDir = filepath.Join(dir, "stratbench")
		} else {
			cacheDir = filepath.Join(j.cfg.Home, "cache")
		}
	}
	bridge, err := python.InstallBridge(cacheDir)
	if err != nil {
		return nil, err
	}
	l := j.cfg.Limits
	spec := supervisor.Spec{
		Path: j.cfg.Python.Executable,
		Args: python.BridgeArgs(bridge, j.cfg.Strategy),
		Env:  python.WorkerEnv(j.cfg.Env),
		Dir:  filepath.Dir(j.cfg.Strategy),
		Limits: supervisor.Limits{
			MemoryBytes: l.MemoryBytes,
			Processes:   l.Processes,
			OutputBytes: l.LogBytes,
		},
		// Each file a process of the tree writes is capped (a write past
		// it fails with EFBIG; CPython ignores SIGXFSZ, so Python code gets
		// OSError "File too large"): the supervisor's init sets the limit,
		// soft and hard, before the interpreter starts.
		FileSizeBytes: l.ArtifactFileBytes,
		StateFile:     filepath.Join(j.dir, "procs.json"),
		Output:        logs.write,
	}
	if j.cfg.Sandbox {
		if err := j.sandbox(&spec, bridge); err != nil {
			return nil, err
		}
	}
	w, err := startWorker(ctx, spawn{spec: spec, limits: l, host: j.cfg.Host, onYield: progress.yielded, onProgress: progress.running, lastStderr: logs.lastStderr,
		sandboxed: j.cfg.Sandbox})
	if err != nil {
		return nil, err
	}
	progress.w = w
	j.mu.Lock()
	j.worker = w
	if j.stopping.Load() {
		w.requestStop()
	}
	j.mu.Unlock()
	return w, nil
}

// sandbox wraps spec in the sandbox launcher: the worker may read the
// interpreter's folders, the strategy's folder and the bridge, and write only
// the artifacts folder and a private temporary folder (removed with the job's
// worker).
func (j *Job) sandbox(spec *supervisor.Spec, bridge string) error {
	if err := sandbox.Check(); err != nil {
		return &UsageError{fmt.Errorf("refusing to run: %w", err)}
	}
	py := j.cfg.Python
	pol, err := sandbox.InterpreterPolicy(py.Executable, py.Paths)
	if err != nil {
		return &UsageError{fmt.Errorf("sandbox: %w", err)}
	}
	tmp := filepath.Join(j.dir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	pol.ReadDirs = append(pol.ReadDirs, filepath.Dir(j.cfg.Strategy), filepath.Dir(bridge))
	if py.VenvConfig != "" {
		pol.ReadFiles = append(pol.ReadFiles, py.VenvConfig)
	}
	pol.WriteDirs = append(pol.WriteDirs, filepath.Join(j.dir, "artifacts"), tmp)
	extra := map[string]string{"TMPDIR": tmp, "HOME": tmp}
	maps.Copy(extra, j.cfg.Env)
	pol.Env = python.SandboxEnv(extra)
	pol.KeepFDs = python.FDCount // stdio and the protocol's descriptors
	path, args, err := sandbox.Command(pol, spec.Path, spec.Args)
	if err != nil {
		return &UsageError{fmt.Errorf("sandbox: %w", err)}
	}
	spec.Path, spec.Args, spec.Env = path, args, pol.Env
	return nil
}

func pythonParams(params map[string]any) map[string]any {
	out := make(map[string]any, len(params))
	for k, v := range params {
		if f, ok := v.(float64); ok {
			v = python.Float(f)
		}
		out[k] = v
	}
	return out
}

func (j *Job) forwardSamples(samples <-chan supervisor.Sample) {
	var peakMem int64
	var peakProcs int
	for s := range samples {
		peakMem, peakProcs = max(peakMem, s.MemoryBytes), max(peakProcs, s.Processes)
		procs := make([]Proc, len(s.Procs))
		for i, p := range s.Procs {
			procs[i] = Proc{PID: p.PID, PPID: p.PPID, RSSBytes: p.RSSBytes, Command: p.Command}
		}
		j.pub.setSample(ResourceSample{JobID: j.id, Time: s.Time, MemoryBytes: s.MemoryBytes, PeakMemoryBytes: peakMem,
			Processes: s.Processes, PeakProcesses: peakProcs, Procs: procs, TreeTracking: s.TreeTracking.String()})
	}
}

// watchArtifacts enforces the cap on the strategy's files in the job folder
// until ctx is done.
func (j *Job) watchArtifacts(ctx context.Context, logs *logSink) {
	dirs := []string{filepath.Join(j.dir, "artifacts"), filepath.Join(j.dir, "tmp")}
	l := j.cfg.Limits
	watch := &artifactsWatch{dirs: dirs, limit: l.ArtifactsBytes, every: l.ArtifactsCheck, notice: logs.system,
		freeze: func() {
			// No file of the tree may grow any more: every process has its
			// limit lowered to 0, and those it starts inherit that.
			j.mu.Lock()
			w := j.worker
			j.mu.Unlock()
			if w != nil {
				if err := w.proc.SetFileSizeLimit(0); err != nil {
					logs.system("could not stop the strategy's files from growing: " + err.Error())
				}
			}
		}}
	watch.run(ctx)
}

// finish writes the final report and ends the event stream. The report is
// kept in memory whatever happens to the job folder: Wait returns it.
func (j *Job) finish(rep *Report, equity []float64, err error) {
	if rep.Status == StatusRunning {
		rep.Status = StatusFailed
		rep.Failure = &contract.Failure{Kind: contract.KindCrash, Hook: contract.HookStartup, Message: "stratbench: " + err.Error()}
	}
	now := time.Now()
	rep.FinishedAt = &now
	rep.DurationMS = now.Sub(rep.StartedAt).Milliseconds()
	rep.SaveErrors = append(rep.SaveErrors, j.saveErrors...)
	res := j.reserve
	j.reserve = nil
	if werr := saveReport(j.dir, rep, res); werr != nil {
		rep.SaveErrors = append(rep.SaveErrors, werr.Error())
		markUnsaved(j.dir)
	} else {
		os.Remove(filepath.Join(j.dir, ownerFile))
	}
	if err == nil && len(rep.SaveErrors) > 0 {
		err = &SaveError{JobID: j.id, Errors: rep.SaveErrors}
	}
	j.report, j.err = rep, err
	j.pub.close(Finished{JobID: j.id, Report: rep, Equity: equity})
}

func fingerprint(strategySHA, dataHash string, params map[string]any, flags, version string) string {
	p, _ := json.Marshal(params) // map keys are sorted
	h := sha256.New()
	fmt.Fprintf(h, "stratbench fingerprint v1\nstrategy %s\ndata %s\nparams %s\nflags %s\nversion %s\n", strategySHA, dataHash, p, flags, version)
	return hex.EncodeToString(h.Sum(nil))
}

// writeJSONAtomic writes v as indented JSON through a temporary file and a
// rename, so that readers never see a half-written file.
func writeJSONAtomic(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return atomicfile.WriteFile(path, append(data, '\n'), 0o644, atomicfile.Durable)
}
