package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"stratbench/contract"
	"stratbench/internal/atomicfile"
	"stratbench/job"
	"stratbench/python"
	"stratbench/supervisor"
)

// The life of one job, in the order run goes through it: the report it
// starts with, the job folder, the worker and what watches it, the
// handshake, the replay and on_finish, and the final report.

// ending is how a run ended: its status, the failure that ended it if any,
// and on_finish's result.
type ending struct {
	status   job.Status
	failure  *contract.Failure
	metadata json.RawMessage // nil without one
}

// folder is what the job writes into its folder while it runs.
type folder struct {
	logs    *logSink
	records *jobRecords
}

// run is the job's life. It ends by writing the final report (finish), or,
// when the job could not run at all because of what the user asked for, by
// removing the folder (refuse).
func (j *Job) run(ctx context.Context) {
	defer close(j.done)
	defer j.letGo() // the run's claim on the folder, after Ended
	setup := j.driver.Setup()
	rep := j.firstReport(setup)
	f, err := j.openFolder(rep)
	if err != nil {
		j.finish(rep, nil, err)
		return
	}
	j.pub.milestone(job.JobStarted{JobID: j.id, Dir: j.dir, Strategy: j.cfg.Strategy, Sandbox: j.cfg.Sandbox,
		Limits: j.cfg.Limits, Events: setup.Data.Events, StartedAt: rep.StartedAt, Data: setup.Data, Market: setup.Market})

	meter := progressMeter{pub: j.pub, job: j.id, total: setup.Data.Events, start: time.Now()}
	w, err := j.startWorker(ctx, f.logs, meter)
	if errors.As(err, new(*UsageError)) {
		j.refuse(f, err) // a sandbox policy that cannot be built, say
		return
	}
	if err != nil {
		f.logs.close()
		if ctx.Err() != nil {
			// Killed while its worker started (a fork or an interpreter's
			// start cut short): stopped, as a kill later is (endingOf),
			// not a crash of the strategy at startup.
			rep.Status, err = job.StatusStopped, nil
		}
		j.finish(rep, nil, err)
		return
	}
	watching := j.watchWorker(ctx, w, f.logs)
	end, err := j.drive(ctx, w, setup, rep, f)
	// Where the run was, for a limit found broken as the tree stops (read
	// while the shared page is there).
	lastHook, lastEvent, lastAt := w.currentHook()
	// A Stop from now on has nothing to stop; the shared page goes away.
	j.setWorker(nil)
	result := j.closeWorker(w, watching)
	if errors.As(err, new(*UsageError)) {
		j.refuse(f, err) // an undeclared --param, say
		return
	}
	if err != nil {
		// The driver failed on its own: record it rather than lose the run.
		end = ending{status: job.StatusFailed,
			failure: &contract.Failure{Kind: contract.KindCrash, Hook: contract.HookOnData, Message: "stratbench: " + err.Error()}}
	}
	if end.failure == nil && w.failure != nil {
		// Found as the worker closed: a bad frame on the debugger's pipe
		// after the last request.
		end = ending{status: job.StatusFailed, failure: w.failure}
	}
	if end.failure == nil && result.Violation != nil {
		// A limit no sample saw broken, seen as the tree was stopped
		// (supervisor: a count passed after the last sample): the run
		// broke it all the same.
		end = ending{status: job.StatusFailed, failure: violationFailure(result.Violation, lastHook, lastEvent, lastAt), metadata: end.metadata}
	}
	j.complete(rep, setup, end, w, result, f)
}

// firstReport is the report the job starts with (status running), as
// job.json holds it until the final one replaces it.
func (j *Job) firstReport(setup contract.Setup) *job.Report {
	sum := sha256.Sum256(j.source)
	return &job.Report{
		JobID:     j.id,
		Status:    job.StatusRunning,
		Engine:    "python",
		Strategy:  job.StrategyInfo{Path: j.cfg.Strategy, SHA256: hex.EncodeToString(sum[:]), Params: map[string]any{}},
		Data:      setup.Data,
		Market:    setup.Market,
		Version:   j.cfg.Version,
		Python:    job.PythonInfo{Executable: j.cfg.Python.Executable, Version: j.cfg.Python.Version, Sandbox: j.cfg.Sandbox},
		Limits:    limitsReport(j.cfg.Limits),
		Hooks:     map[contract.Hook]job.Stats{contract.HookOnData: {}, contract.HookOnExecution: {}, contract.HookOnFinish: {}},
		Metadata:  json.RawMessage("null"),
		StartedAt: time.Now().UTC(),
		Sweep:     j.cfg.Sweep,
	}
}

// openFolder writes the job folder's first files: the owner record, the
// reserve for the final report, the first job.json, and opens the log and
// the record files.
func (j *Job) openFolder(rep *job.Report) (folder, error) {
	// The owner record says which stratbench runs the job, until the final
	// report is written: if stratbench is killed, the next one finds the job
	// ownerless and marks it failed (Recover).
	if err := writeOwner(j.dir); err != nil {
		return folder{}, err
	}
	// Room for the final report first: the disk may fill during the run.
	res, reserveErr := makeReserve(j.dir)
	j.reserve = res
	if err := writeJSONAtomic(filepath.Join(j.dir, "job.json"), rep); err != nil {
		return folder{}, err
	}
	logs, err := openLogSink(filepath.Join(j.dir, "logs.jsonl"), j.cfg.Limits.LogFileBytes, j.pub)
	if err != nil {
		return folder{}, err
	}
	if reserveErr != nil {
		logs.system("could not " + reserveErr.Error() + "; if the disk fills up, job.json may not be saved (the report is still printed)")
	}
	return folder{logs: logs, records: newJobRecords(j.dir, j.cfg.Limits.RecordBytes, logs.system)}, nil
}

// watchers are the goroutines that watch a worker while it runs: one
// forwards the supervisor's samples until the tree is gone, one enforces
// the cap on the strategy's files until it is stopped.
type watchers struct {
	stopArtifacts context.CancelFunc
	wg            sync.WaitGroup
}

// watchWorker starts the watchers of w.
func (j *Job) watchWorker(ctx context.Context, w *worker, logs *logSink) *watchers {
	ws := &watchers{}
	ws.wg.Add(2)
	go func() {
		defer ws.wg.Done()
		j.forwardSamples(w.proc.Samples())
	}()
	artCtx, stop := context.WithCancel(ctx)
	ws.stopArtifacts = stop
	go func() {
		defer ws.wg.Done()
		j.watchArtifacts(artCtx, logs)
	}()
	return ws
}

// closeWorker ends the worker and its watchers and publishes the final
// statistics. (A sandboxed worker's private /tmp ends with its tree.)
func (j *Job) closeWorker(w *worker, ws *watchers) supervisor.Result {
	result := w.close()
	// After the tree has ended: the artifacts' last check sees all the
	// run wrote.
	ws.stopArtifacts()
	ws.wg.Wait() // the samples end with the tree
	w.stats.publish(time.Now())
	return result
}

// drive runs the handshake, the replay and on_finish, and says how the run
// ended. Its error is a *UsageError (the params), or the driver's own
// failure; a failure of the strategy is the ending's.
func (j *Job) drive(ctx context.Context, w *worker, setup contract.Setup, rep *job.Report, f folder) (ending, error) {
	m, err := w.handshake(ctx)
	if err != nil {
		return endingOf(ctx, err)
	}
	params, perr := resolveParams(m.ParamDefaults, j.cfg.Params)
	if perr != nil {
		return ending{}, &UsageError{perr}
	}
	rep.Python.Executable, rep.Python.Version = m.Python.Executable, m.Python.Version
	// Known since the worker started; the final report sets it again from
	// the tree's result.
	rep.Resources.TreeTracking = w.proc.TreeTracking().String()
	j.saveParams(rep, params, f.logs)
	name := ""
	if m.Name != nil {
		name = *m.Name
	}
	manifest := contract.Manifest{Name: name, Hooks: m.Hooks, Params: params, History: m.History}
	init := python.InitMsg{Params: pythonParams(params), Symbols: setup.Data.Symbols, Cash: setup.Cash,
		Artifacts: filepath.Join(j.dir, "artifacts")}
	if setup.LocalFills && len(setup.Data.Symbols) > 0 && contract.BarHook(m.Hooks) == contract.HookOnData {
		init.Local = &python.LocalMarket{FeeBps: setup.Market.FeeBps, SlippageBps: setup.Market.SlippageBps, AllowShort: setup.Market.AllowShort,
			MaxBytes: j.cfg.Limits.MessageBytes / 2}
	}
	if err := w.init(ctx, manifest, init); err != nil {
		return endingOf(ctx, err)
	}
	j.pub.milestone(job.WorkerReady{JobID: j.id, Python: rep.Python, Hooks: m.Hooks, Params: params, History: m.History})

	status := job.StatusPassed
	switch err := j.driver.Drive(ctx, w, f.records); {
	case errors.Is(err, contract.ErrStopped):
		status = job.StatusStopped
	case err != nil:
		return endingOf(ctx, err)
	}
	metadata, err := w.finish(ctx)
	if err != nil {
		return endingOf(ctx, err)
	}
	return ending{status: status, metadata: metadata}, nil
}

// saveParams records the params the run got, as soon as the worker's
// MANIFEST gave them (the first report, written before the worker started,
// could not know them): job.json then says what a running job runs with,
// and a job whose stratbench is killed from here on is recovered with them
// (Recover keeps what the report it finds says), with what else rep
// knows by then (the interpreter the worker named, the tree tracking). A
// job without params has nothing to add to the first report's {} and pays
// no second write; the others pay one durable write (about 0.6 ms on this
// VM's disk, measured), before init, so that whatever the strategy's hooks
// print, job.json has its params by then. A write that fails loses only
// that: the final report carries them.
func (j *Job) saveParams(rep *job.Report, params map[string]any, logs *logSink) {
	rep.Strategy.Params = params
	if len(params) == 0 {
		return
	}
	if err := writeJSONAtomic(filepath.Join(j.dir, "job.json"), rep); err != nil {
		logs.system("could not save the params in job.json while the job runs (its final report will have them): " + err.Error())
	}
}

// endingOf classifies an error that ended the run: a failure of the
// strategy, or a stop when the job's context was cancelled. Anything else
// is returned as it is.
func endingOf(ctx context.Context, err error) (ending, error) {
	var f *contract.Failure
	switch {
	case errors.As(err, &f):
		return ending{status: job.StatusFailed, failure: f}, nil
	case ctx.Err() != nil:
		return ending{status: job.StatusStopped}, nil
	}
	return ending{}, err
}

// complete fills in the final report from the ending, the worker, the
// supervisor's result and the driver's outcome, closes the record files and
// the log, and saves it.
func (j *Job) complete(rep *job.Report, setup contract.Setup, end ending, w *worker, result supervisor.Result, f folder) {
	rep.Status = end.status
	rep.Failure = end.failure
	j.lostWithTemplate = w.lostWithTemplate && end.failure == w.failure
	j.batches, j.aheads, j.joined = w.batches, w.aheads, w.joined
	if fl := end.failure; fl != nil && fl.Kind == contract.KindTimeout && fl.Traceback == "" && len(fl.Frames) == 0 {
		// The tree is gone and its output drained: the stack it wrote
		// after SIGABRT, if any, is all there.
		fl.Traceback, fl.Frames = f.logs.stack.stack(j.cfg.Strategy, j.bridge)
	}
	for hook, s := range w.hookReport() {
		rep.Hooks[hook] = s
	}
	rep.Resources = job.Resources{PeakMemoryBytes: result.PeakMemoryBytes, PeakProcesses: result.PeakProcesses,
		PeakTasks: result.PeakTasks, TreeTracking: result.TreeTracking.String()}
	rep.Logs = job.LogsInfo{Bytes: result.OutputBytes, Truncated: result.OutputTruncated}
	rep.CommandsDiscarded = w.discarded
	if end.metadata != nil {
		rep.Metadata = end.metadata
	}
	out := j.driver.Outcome()
	rep.OrdersHash = out.OrdersHash
	dataHash := setup.DataHash
	if out.DataHash != "" { // computed as the data streamed
		dataHash = out.DataHash
	}
	rep.Fingerprint = fingerprint(rep.Strategy.SHA256, dataHash, rep.Strategy.Params, setup.Flags, j.cfg.Version)
	rep.Metrics = &out.Metrics
	rep.Symbols = out.Symbols
	for _, err := range f.records.close() {
		j.saveErrors = append(j.saveErrors, err.Error())
	}
	// The log is complete before the final report says the job ended:
	// `logs --follow` stops at that report.
	if err := f.logs.close(); err != nil {
		j.saveErrors = append(j.saveErrors, err.Error())
	}
	j.finish(rep, out.Equity, nil)
}

// refuse ends a job that could not run at all because of what the user
// asked for: no job folder is kept, and Wait returns err.
func (j *Job) refuse(f folder, err error) {
	f.records.close()
	f.logs.close()
	if j.reserve != nil {
		j.reserve.release()
	}
	os.RemoveAll(j.dir)
	j.err = err
	j.pub.close(job.Finished{JobID: j.id, Err: err})
}

// finish writes the final report and ends the event stream. The report is
// kept in memory whatever happens to the job folder: Wait returns it.
func (j *Job) finish(rep *job.Report, equity []float64, err error) {
	if rep.Status == job.StatusRunning {
		rep.Status = job.StatusFailed
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
	j.pub.close(job.Finished{JobID: j.id, Report: rep, Equity: equity})
	if j.cfg.Ended != nil {
		j.cfg.Ended(j.id)
	}
}

// forwardSamples publishes the supervisor's samples of the tree, with the
// peaks so far, until the tree is gone.
func (j *Job) forwardSamples(samples <-chan supervisor.Sample) {
	var peakMem int64
	var peakProcs, peakTasks int
	for s := range samples {
		peakMem, peakProcs, peakTasks = max(peakMem, s.MemoryBytes), max(peakProcs, s.Processes), max(peakTasks, s.Tasks)
		procs := make([]job.Proc, len(s.Procs))
		for i, p := range s.Procs {
			procs[i] = job.Proc{PID: p.PID, PPID: p.PPID, RSSBytes: p.RSSBytes, Command: p.Command}
		}
		j.pub.setSample(job.ResourceSample{JobID: j.id, Time: s.Time, MemoryBytes: s.MemoryBytes, PeakMemoryBytes: peakMem,
			Processes: s.Processes, PeakProcesses: peakProcs, Tasks: s.Tasks, PeakTasks: peakTasks, Procs: procs,
			TreeTracking: s.TreeTracking.String()})
	}
}

// watchArtifacts enforces the cap on the strategy's files in the job folder
// until ctx is done, and checks it once more then (see artifacts.go).
// Sandboxed, the kernel enforces it: the folder is a tmpfs of that size
// until the tree has ended.
func (j *Job) watchArtifacts(ctx context.Context, logs *logSink) {
	if j.cfg.Sandbox {
		return
	}
	dirs := []string{filepath.Join(j.dir, "artifacts")}
	l := j.cfg.Limits
	watch := &artifactsWatch{dirs: dirs, limit: l.ArtifactsBytes, every: l.ArtifactsCheck, notice: logs.system,
		freeze: func() {
			// No file of the tree may grow any more: every process has its
			// limit lowered to 0, and those it starts inherit that.
			if w := j.runningWorker(); w != nil {
				if err := w.proc.SetFileSizeLimit(0); err != nil {
					select {
					case <-w.proc.Ending(): // the tree is ending: nothing grows any more
					default:
						logs.system("could not stop the strategy's files from growing: " + err.Error())
					}
				}
			}
		}}
	watch.run(ctx)
	// closeWorker stops the watch once the tree has ended: nothing of
	// the run writes any more.
	watch.final()
}

func fingerprint(strategySHA, dataHash string, params map[string]any, flags, version string) string {
	p, _ := json.Marshal(params) // map keys are sorted
	h := sha256.New()
	fmt.Fprintf(h, "stratbench fingerprint v1\nstrategy %s\ndata %s\nparams %s\nflags %s\nversion %s\n", strategySHA, dataHash, p, flags, version)
	return hex.EncodeToString(h.Sum(nil))
}

// writeJSONAtomic writes v as indented JSON through a temporary file and a
// rename, so that readers never see a half-written file, and waits for the
// disk (writeJSONFile).
func writeJSONAtomic(path string, v any) error {
	return writeJSONFile(path, v, atomicfile.Durable)
}

// writeJSONFile is writeJSONAtomic with the durability given.
func writeJSONFile(path string, v any, d atomicfile.Durability) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return atomicfile.WriteFile(path, append(data, '\n'), 0o644, d)
}
