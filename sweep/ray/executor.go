// This file is long because it is the whole Ray executor: the package
// built and uploaded, one Ray job per phase, the results as they stream
// back (each run's folder written locally in one step), and stopping and
// resuming; the node side is in shard.go.

package ray

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"stratbench/internal/termtext"
	"stratbench/job"
	"stratbench/sweep"
	"stratbench/sweep/local"
)

// A sweep on a Ray cluster (docs/ray.md, docs/ARCHITECTURE.md "A sweep
// on Ray"): the local stratbench checks the cluster (the command, with
// Client.Preflight), packages and uploads what the runs need
// (NewExecutor), submits one coordinator job per phase and turns the
// results the job's log streams back into the sweep's results and local
// job folders (Executor). The runs themselves run on the nodes, through
// `stratbench ray-shard` (Shard).

// followRetry is how long the log's follower waits before it connects
// again after the stream dropped.
const followRetry = time.Second

// Setup is what a sweep's executor on the cluster is made of.
type Setup struct {
	Client *Client
	// Binary is stratbench's own executable, for the nodes
	// (CheckExecutable has passed it).
	Binary string
	// Strategy is the strategy file: its folder goes into the package.
	Strategy string
	// Python is an interpreter present on every node for the runs; ""
	// runs the node's own.
	Python string
	// Slots is how many runs at once; 0: one per CPU of the cluster.
	Slots int
	// Doc is the sweep's document: its run flags, its earlier Ray jobs;
	// the executor records its jobs in it and saves it in Store.
	Doc   *sweep.Document
	Store *sweep.Store
	// Jobs is the local job store the runs' folders come back to.
	Jobs *job.Store
	// Notices is where the executor says what the cluster did (the
	// package, lost nodes, retries); Stderr where it says that the data
	// stays on the nodes.
	Notices, Stderr io.Writer
}

// BuildError is a code package that cannot be built from what the sweep
// names (its strategy's folder, its data, the binary): bad input.
type BuildError struct{ Err error }

func (e *BuildError) Error() string { return e.Err.Error() }
func (e *BuildError) Unwrap() error { return e.Err }

// NewExecutor makes s.Doc's sweep run on the cluster: it builds the code
// package (the binary, the strategy's folder, the data when it fits;
// otherwise it says on Stderr that every node must read the data at its
// path), uploads it unless the cluster has it, stops the sweep's earlier
// Ray jobs that still run, and records the cluster as the sweep's
// executor. Nothing is submitted yet. A package that cannot be built is a
// *BuildError. Close removes the packages built.
func NewExecutor(ctx context.Context, s Setup) (*Executor, error) {
	pkgDir, err := os.MkdirTemp("", "stratbench-ray-")
	if err != nil {
		return nil, err
	}
	e, err := newExecutor(ctx, s, pkgDir)
	if err != nil {
		os.RemoveAll(pkgDir)
		return nil, err
	}
	return e, nil
}

func newExecutor(ctx context.Context, s Setup, pkgDir string) (*Executor, error) {
	spec := PackageSpec{Binary: s.Binary, Strategy: filepath.Dir(s.Strategy)}
	rf := s.Doc.RunFlags
	data := rf.Data
	spec.Data = data
	code, err := BuildPackage(ctx, spec, pkgDir)
	var tooLarge *TooLargeError
	if errors.As(err, &tooLarge) && len(data) > 0 {
		fmt.Fprintf(s.Stderr, "stratbench: ray: the data (%s) does not fit in the package Ray takes (%d MiB with stratbench and the strategy): the nodes read it at %s instead, which must exist, the same, on every node of the cluster\n",
			mib(tooLarge.DataBytes), MaxPackageBytes>>20, strings.Join(data, ", "))
		spec.Data, spec.NodeData = nil, data
		code, err = BuildPackage(ctx, spec, pkgDir)
	}
	if err != nil {
		return nil, &BuildError{err}
	}
	uploaded, err := s.Client.EnsurePackage(ctx, code)
	if err != nil {
		return nil, fmt.Errorf("uploading the package: %w", err)
	}
	if uploaded {
		fmt.Fprintf(s.Notices, "stratbench: ray: package %s (%.1f MiB) uploaded\n", code.URI, float64(code.Size)/(1<<20))
	} else {
		fmt.Fprintf(s.Notices, "stratbench: ray: package %s already on the cluster, not sent\n", code.URI)
	}
	if err := stopEarlierJobs(ctx, s.Client, s.Doc.Executor.RayJobs, s.Notices); err != nil {
		return nil, err
	}
	cfg := ShardConfig{
		SweepID: s.Doc.SweepID, SHA256: s.Doc.Strategy.SHA256,
		Strategy: path.Join(PackageStrategy, filepath.Base(s.Strategy)),
		From:     rf.From, To: rf.To, Timeframe: rf.Timeframe,
		Cash: rf.Cash, FeeBps: rf.FeeBps,
		SlippageBps: rf.SlippageBps, AllowShort: rf.AllowShort, Sandbox: rf.Sandbox,
		Python: s.Python,
	}
	cfg.Data = code.Manifest.Data // the package's paths: data/NAME
	if len(spec.NodeData) > 0 {
		cfg.Data = spec.NodeData
	}
	s.Doc.Executor = sweep.Executor{Kind: sweep.ExecutorRay, Address: s.Client.Address(), RayJobs: s.Doc.Executor.RayJobs}
	s.Doc.Spec.Jobs = s.Slots
	return &Executor{client: s.Client, code: code, pkgDir: pkgDir, shard: cfg, slots: s.Slots, doc: s.Doc, store: s.Store,
		jobs: s.Jobs, notices: s.Notices}, nil
}

// Close removes the packages built.
func (e *Executor) Close() { os.RemoveAll(e.pkgDir) }

// stopEarlierJobs stops a resumed sweep's Ray jobs that still run: a
// stratbench killed outright (SIGKILL, a lost machine) leaves its job
// running on the cluster, and its runs would only compete with the resume's.
func stopEarlierJobs(ctx context.Context, client *Client, ids []string, notices io.Writer) error {
	for _, id := range ids {
		job, err := client.Job(ctx, id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("the sweep's earlier job %s: %w", id, err)
		}
		if job.Status.Terminal() {
			continue
		}
		fmt.Fprintf(notices, "stratbench: ray: the sweep's earlier job %s is still %s: stopping it\n", id, job.Status)
		if _, err := client.Stop(ctx, id); err != nil {
			return fmt.Errorf("stopping the sweep's earlier job %s: %w", id, err)
		}
		if _, err := client.Wait(ctx, id, 200*time.Millisecond); err != nil {
			return fmt.Errorf("stopping the sweep's earlier job %s: %w", id, err)
		}
	}
	return nil
}

// Executor runs a sweep's items on a Ray cluster (sweep.RunExecutor):
// one coordinator job per Execute, whose log brings each run's report, log
// and artifacts back into a local job folder and its result to finished.
type Executor struct {
	client *Client
	code   *Package // the code package, uploaded
	pkgDir string   // where the packages are built (removed by close)
	shard  ShardConfig
	// slots is --jobs: how many runs at once; 0 means one per CPU of the
	// cluster (then recorded in the document from the coordinator's hello).
	slots int
	// doc is the sweep's document: its executor block lists each Ray job,
	// saved in store as soon as the job is submitted.
	doc     *sweep.Document
	store   *sweep.Store
	jobs    *job.Store // the local job folders
	notices io.Writer  // what the cluster did to runs (lost nodes, retries)
}

// Execute runs items in one coordinator job (see sweep.RunExecutor). A stop
// is Ray's stop of the job: the coordinator asks the runs in flight to
// stop (on_finish runs) and their stopped reports come back; cancelling ctx
// stops the job the same way and returns without waiting for it.
func (e *Executor) Execute(ctx context.Context, items iter.Seq[sweep.Item], stop <-chan struct{}, finished func(sweep.Item, sweep.Result) error) error {
	byKey := map[string]sweep.Item{}
	var work []WorkItem
	for it := range items {
		key := runKey(it)
		payload, err := json.Marshal(itemPayload{Args: it.Args, Window: it.Window})
		if err != nil {
			return fmt.Errorf("%s: %w", it, err)
		}
		byKey[key.String()] = it
		work = append(work, WorkItem{Key: key, Payload: payload})
	}
	if len(work) == 0 || stopped(ctx, stop) {
		return nil
	}
	cfg, err := json.Marshal(e.shard)
	if err != nil {
		return err
	}
	wp, err := BuildWorkPackage(WorkSpec{
		Format: WorkFormat, SweepID: e.doc.SweepID,
		Shard: ShardCommand{Argv: []string{"./" + PackageBinary, "ray-shard", "--config", string(cfg)}},
		Code:  e.code.Check(), Slots: e.slots, Items: work,
	}, e.pkgDir)
	if err != nil {
		return err
	}
	defer os.Remove(wp.Path)
	if _, err := e.client.EnsurePackage(ctx, e.code); err != nil { // pinned again: a resume may come hours later
		return fmt.Errorf("ray: the package: %w", err)
	}
	if _, err := e.client.EnsurePackage(ctx, wp); err != nil {
		return fmt.Errorf("ray: the work package: %w", err)
	}
	id := fmt.Sprintf("stratbench-%s-%d-%s", e.doc.SweepID, len(e.doc.Executor.RayJobs)+1, randomHex(3))
	id, err = e.client.Submit(ctx, CoordinatorJob(id, wp, map[string]string{"stratbench_sweep": e.doc.SweepID}))
	if err != nil {
		return fmt.Errorf("ray: submitting the sweep's job: %w", err)
	}
	e.doc.Executor.RayJobs = append(e.doc.Executor.RayJobs, id)
	// Saved at once: a stratbench killed outright must leave the job's id
	// for the resume that stops it.
	if err := e.store.Save(e.doc); err != nil {
		e.client.Stop(context.WithoutCancel(ctx), id)
		return err
	}
	run := &jobRun{e: e, id: id, items: byKey, done: map[string]bool{}, finished: finished}
	return run.follow(ctx, stop)
}

// jobRun is one coordinator job being followed.
type jobRun struct {
	e        *Executor
	id       string
	items    map[string]sweep.Item
	done     map[string]bool // keys whose result came (or was refused as a repeat)
	finished func(sweep.Item, sweep.Result) error

	stopSent  bool
	err       error       // the first error: the execution ends with it
	lost      []string    // keys the cluster gave up on
	coordErr  string      // the coordinator's own error event
	refused   *Event      // a package check that failed (EventPackage)
	doneEvent *DoneStatus // its last word
}

// follow reads the job's events until its log ends, stopping the job on a
// stop, a cancelled ctx or the first error.
func (r *jobRun) follow(ctx context.Context, stop <-chan struct{}) error {
	events := make(chan Event)
	followed := make(chan error, 1)
	// The follower's owner is this function: it ends with the job's log
	// (or fctx), and follow waits for it below.
	fctx, cancelFollow := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelFollow()
	go func() {
		var cur LogCursor
		err := r.e.client.Follow(fctx, r.id, &cur, followRetry, func(line string) error {
			ev, ok, err := ParseEvent(line)
			if err != nil || !ok {
				return err
			}
			select {
			case events <- ev:
				return nil
			case <-fctx.Done():
				return fctx.Err()
			}
		})
		close(events)
		followed <- err
	}()
	killed := ctx.Done()
	for {
		select {
		case <-stop:
			stop = nil
			r.stopJob()
		case <-killed:
			// A second signal: stop the job (Ray's stop; its runs end as
			// stopped runs on the cluster) and return without waiting.
			killed = nil
			r.stopJob()
			cancelFollow()
		case ev, ok := <-events:
			if !ok {
				return r.end(ctx, <-followed)
			}
			r.handle(ev)
		}
	}
}

// stopJob asks Ray to stop the job, once.
func (r *jobRun) stopJob() {
	if r.stopSent {
		return
	}
	r.stopSent = true
	ctx, cancel := context.WithTimeout(context.Background(), 2*ResponseHeaderTimeout)
	defer cancel()
	if _, err := r.e.client.Stop(ctx, r.id); err != nil && r.err == nil {
		r.err = fmt.Errorf("ray: stopping job %s: %w", r.id, err)
	}
}

// fail records the first error and stops the job.
func (r *jobRun) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.stopJob()
}

func (r *jobRun) handle(ev Event) {
	switch ev.Type {
	case EventHello:
		if r.e.slots == 0 && r.e.doc.Spec.Jobs == 0 {
			r.e.doc.Spec.Jobs = ev.Slots
		}
	case EventSlot:
		if ev.State == SlotLost {
			fmt.Fprintf(r.e.notices, "stratbench: ray: a slot on node %.12s was lost: %s\n", ev.NodeID, ev.Reason)
		}
	case EventRequeued:
		fmt.Fprintf(r.e.notices, "stratbench: ray: %s runs again elsewhere (attempt %d lost: %s)\n", ev.Key, ev.Attempt, ev.Reason)
	case EventAbandoned:
		r.lost = append(r.lost, fmt.Sprintf("%s (lost %d times: %s)", ev.Key, ev.Attempts, ev.Reason))
	case EventDropped:
		// Stopping: it has no result and runs on resume.
	case EventError:
		r.coordErr = ev.Message
	case EventPackage:
		if r.refused == nil {
			r.refused = &ev
		}
	case EventDone:
		st := ev.Status
		r.doneEvent = &st
	case EventResult:
		if err := r.result(ev); err != nil {
			r.fail(err)
		}
	}
}

// result takes a run's outcome: its job folder comes home, and a passed or
// failed run is handed to finished once per key.
func (r *jobRun) result(ev Event) error {
	key := ev.Key.String()
	it, ok := r.items[key]
	if !ok {
		return fmt.Errorf("ray: job %s sent a result for %s, which it was not given", r.id, key)
	}
	var res runResult
	if err := json.Unmarshal(ev.Result, &res); err != nil {
		return fmt.Errorf("ray: job %s: the result of %s: %w", r.id, key, err)
	}
	for _, id := range res.Lost {
		// As a local sweep says it (lostJobs), one line a job, as it comes.
		again := "ran again"
		if res.Stopped {
			again = "has no result (the sweep was stopping)"
		}
		fmt.Fprintf(r.e.notices, "stratbench: ray: job %s (%s, on %s) was lost with its warm template and %s (not the run's own failure)\n",
			termtext.Line(id), it, termtext.Line(res.Host), again)
	}
	if res.Error != "" {
		return fmt.Errorf("%s could not run on node %s (%.12s): %s", it, res.Host, ev.NodeID, res.Error)
	}
	if res.Stopped {
		return nil // lost with its template while it stopped: no result, a resume runs it again
	}
	rep, err := importJob(r.e.jobs, res, runPlace{RayJob: r.id, NodeID: ev.NodeID, Host: res.Host, Attempt: ev.Attempt, NodeDir: res.NodeDir})
	if err != nil {
		return fmt.Errorf("%s: bringing its job folder back from the cluster: %w", it, err)
	}
	if r.done[key] || r.err != nil {
		return nil // never twice; after an error, nothing more is appended
	}
	out, err := local.ResultOf(rep, r.e.shard.SHA256)
	if errors.Is(err, sweep.ErrRunStopped) {
		return nil // stopped: no result, a resume runs it again
	}
	if err != nil {
		return err
	}
	r.done[key] = true
	return r.finished(it, out)
}

// end reads the job's final state once its log has ended.
func (r *jobRun) end(ctx context.Context, followErr error) error {
	if r.err != nil {
		return r.err
	}
	if err := ctx.Err(); err != nil {
		return nil // killed: the runner saves the sweep as stopped
	}
	if followErr != nil {
		// Nobody would read what the job does next: stop it (best
		// effort: the cluster may be what went away).
		r.stopJob()
		return fmt.Errorf("ray: following job %s: %w", r.id, followErr)
	}
	jctx, cancel := context.WithTimeout(context.Background(), 2*ResponseHeaderTimeout)
	defer cancel()
	job, err := r.e.client.Wait(jctx, r.id, 200*time.Millisecond)
	if err != nil {
		return fmt.Errorf("ray: job %s: %w", r.id, err)
	}
	switch {
	case r.refused != nil:
		return fmt.Errorf("ray: job %s, node %.12s: %s", r.id, r.refused.NodeID, termtext.Line(r.refused.Message))
	case job.Status == JobFailed:
		msg := job.Message
		if r.coordErr != "" {
			msg = r.coordErr + "; Ray: " + msg
		}
		return fmt.Errorf("ray: job %s failed: %s", r.id, msg)
	case job.Status == JobStopped && !r.stopSent:
		return fmt.Errorf("ray: job %s was stopped from outside stratbench: %s", r.id, job.Message)
	case r.stopSent:
		return nil
	case len(r.lost) > 0:
		return fmt.Errorf("ray: the cluster gave up on %s; `stratbench sweep --resume %s` runs them again", strings.Join(r.lost, ", "), r.e.doc.SweepID)
	case r.doneEvent == nil || *r.doneEvent != DoneFinished:
		return fmt.Errorf("ray: job %s ended (%s) without its last event", r.id, job.Status)
	}
	return nil
}

// stopped reports whether the sweep was asked to end.
func stopped(ctx context.Context, stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return ctx.Err() != nil
	}
}

// runKey is an item's key on the cluster.
func runKey(it sweep.Item) RunKey {
	k := RunKey{Fold: it.Fold, Index: int(it.Combination.Index)}
	if it.Phase != sweep.PhaseNone {
		p := string(it.Phase)
		k.Phase = &p
	}
	return k
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// PlaceFile, in the job folder of a run that ran on a Ray cluster, says
// where it ran (runPlace).
const PlaceFile = "ray.json"

// runPlace is where a run ran on the cluster.
type runPlace struct {
	RayJob  string `json:"ray_job"` // the coordinator job's submission id
	NodeID  string `json:"node_id"` // Ray's node id
	Host    string `json:"host"`
	Attempt int    `json:"attempt"` // 1, or more when its node was lost before
	// NodeDir is the run's job folder on the node, when something of it
	// (a long log, large artifacts) stayed there.
	NodeDir string `json:"node_dir,omitempty"`
}

// importJob writes a run's job folder from what came back from its node
// (job.json, logs.jsonl, artifacts/, records/, and where it ran in PlaceFile)
// under the local job store, whole or not at all (built aside, then
// renamed), and returns its report. A job already there is left as it is.
func importJob(store *job.Store, res runResult, at runPlace) (*job.Report, error) {
	var rep job.Report
	if err := json.Unmarshal(res.Report, &rep); err != nil {
		return nil, fmt.Errorf("the report: %w", err)
	}
	if !job.IsJobID(rep.JobID) {
		return nil, fmt.Errorf("the report's job id %q", rep.JobID)
	}
	final := store.JobDir(rep.JobID)
	if _, err := os.Stat(final); err == nil {
		return &rep, nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(final), ".import-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "job.json"), res.Report, 0o644); err != nil {
		return nil, err
	}
	where, err := json.MarshalIndent(at, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, PlaceFile), append(where, '\n'), 0o644); err != nil {
		return nil, err
	}
	logs, err := gunzip(res.Log, LogReturnBytes)
	if err != nil {
		return nil, fmt.Errorf("the log: %w", err)
	}
	if res.LogCut {
		notice, _ := json.Marshal(job.LogLine{Time: time.Now().UTC(), Stream: "system",
			Line: fmt.Sprintf("stratbench: the log was cut at %d MiB when it came back from the cluster; the whole log is on %s at %s",
				LogReturnBytes>>20, res.Host, filepath.Join(res.NodeDir, "logs.jsonl"))})
		logs = append(append(logs, notice...), '\n')
	}
	if err := os.WriteFile(filepath.Join(tmp, "logs.jsonl"), logs, 0o644); err != nil {
		return nil, err
	}
	artifacts := filepath.Join(tmp, "artifacts")
	if err := os.Mkdir(artifacts, 0o755); err != nil {
		return nil, err
	}
	if len(res.Artifacts) > 0 {
		if err := unzipArtifacts(res.Artifacts, artifacts, ArtifactsReturnBytes); err != nil {
			return nil, fmt.Errorf("the artifacts: %w", err)
		}
	} else if res.ArtifactsBytes > 0 {
		note := fmt.Sprintf("The artifacts of this run (%d bytes, over the %d MiB that come back from the cluster) are on %s at %s\n",
			res.ArtifactsBytes, ArtifactsReturnBytes>>20, res.Host, filepath.Join(res.NodeDir, "artifacts"))
		if err := os.WriteFile(filepath.Join(artifacts, "ON-THE-NODE.txt"), []byte(note), 0o644); err != nil {
			return nil, err
		}
	}
	records := filepath.Join(tmp, job.RecordsDir)
	if err := os.Mkdir(records, 0o755); err != nil {
		return nil, err
	}
	if len(res.Records) > 0 {
		if err := unzipArtifacts(res.Records, records, RecordsReturnBytes); err != nil {
			return nil, fmt.Errorf("the records: %w", err)
		}
	}
	if err := os.Rename(tmp, final); err != nil {
		return nil, err
	}
	return &rep, nil
}

// gunzip decompresses at most limit bytes.
func gunzip(b []byte, limit int64) ([]byte, error) {
	if len(b) == 0 {
		return nil, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(out)) > limit {
		return nil, fmt.Errorf("over %d bytes", limit)
	}
	return out, nil
}

// unzipArtifacts writes the zip's files under dir: regular files at local
// paths only, at most limit bytes in all.
func unzipArtifacts(b []byte, dir string, limit int64) error {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return err
	}
	var total int64
	for _, f := range zr.File {
		name := filepath.FromSlash(f.Name)
		if !filepath.IsLocal(name) || !f.Mode().IsRegular() {
			return fmt.Errorf("%q: not a file under the folder", f.Name)
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		rc, err := f.Open()
		if err != nil {
			return err
		}
		w, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			rc.Close()
			return err
		}
		n, err := io.Copy(w, io.LimitReader(rc, limit-total+1))
		rc.Close()
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if total += n; total > limit {
			return fmt.Errorf("over %d bytes", limit)
		}
	}
	return nil
}
