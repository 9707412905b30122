// This file is long because it is the whole Ray executor: refusals before
// anything is sent, the package, one Ray job per phase, the results as they
// stream back (each run's folder written locally in one step), and stopping
// and resuming; the node side is in sweep_ray_shard.go.

package app

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
	"stratbench/sweep/ray"
)

// A sweep on a Ray cluster (docs/ray.md, docs/ARCHITECTURE.md "A sweep
// on Ray"): the local stratbench checks the
// cluster, packages and uploads what the runs need, submits one
// coordinator job per phase (sweep/ray) and turns the results the job's log
// streams back into the sweep's results and local job folders. The runs
// themselves run on the nodes, through `stratbench ray-shard`.

// RayAddressEnv gives the cluster's address when --ray-address does not.
const RayAddressEnv = "STRATBENCH_RAY_ADDRESS"

// rayFollowRetry is how long the log's follower waits before it connects
// again after the stream dropped.
const rayFollowRetry = time.Second

// rayCluster is the cluster a sweep runs on: its client, stratbench's
// own binary (checked for the nodes), and the folder where the packages
// are built.
type rayCluster struct {
	client *ray.Client
	exe    string
	pkgDir string
}

// close releases the client and removes the built packages.
func (c *rayCluster) close() {
	c.client.Close()
	if c.pkgDir != "" {
		os.RemoveAll(c.pkgDir)
	}
}

// openRay checks, before anything is read, packaged or uploaded, that
// stratbench's own binary can run on the nodes and that the address is a
// Ray dashboard with a job API this build can use. Each refusal is exit 2
// and names which.
func openRay(ctx context.Context, o SweepOptions) (*rayCluster, error) {
	address := o.RayAddress
	if address == "" {
		address = os.Getenv(RayAddressEnv)
	}
	if address == "" {
		return nil, usage(fmt.Errorf("--executor ray: no cluster address: give --ray-address http://HOST:8265 (the head node's dashboard) or set $%s", RayAddressEnv))
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("--executor ray: stratbench's own binary: %w", err)
	}
	if _, err := ray.CheckExecutable(exe); err != nil {
		return nil, usage(fmt.Errorf("--executor ray: %w", err))
	}
	// The cluster's token, when it uses Ray's token authentication: found
	// where Ray's own tools look ($RAY_AUTH_TOKEN, the file
	// $RAY_AUTH_TOKEN_PATH names, ~/.ray/auth_token), never on the
	// command line; messages name its source only.
	token, err := ray.FindToken(os.Getenv, os.Getenv("HOME"))
	if err != nil {
		return nil, usage(fmt.Errorf("--executor ray: %w", err))
	}
	client, err := ray.New(address, ray.Options{Token: token})
	if err != nil {
		return nil, usage(fmt.Errorf("--ray-address: %w", err))
	}
	pctx, cancel := context.WithTimeout(ctx, 2*ray.DialTimeout)
	defer cancel()
	if _, err := client.Preflight(pctx); err != nil {
		client.Close()
		return nil, usage(fmt.Errorf("--executor ray: %w", err))
	}
	return &rayCluster{client: client, exe: exe}, nil
}

// useRay makes sr run on the cluster: it builds the package (stratbench's
// binary, the strategy's folder, the data when it fits; otherwise it says
// that every node must read the data at its path), uploads it unless the
// cluster has it, and sets the sweep's executor. Nothing is submitted yet.
// The runs use the node's Python unless python (--python of a new sweep)
// names one, which must then exist on every node.
func useRay(ctx context.Context, o SweepOptions, sr *sweepRun, c *rayCluster, jobs int, python string) error {
	pkgDir, err := os.MkdirTemp("", "stratbench-ray-")
	if err != nil {
		return err
	}
	c.pkgDir = pkgDir
	spec := ray.PackageSpec{Binary: c.exe, Strategy: filepath.Dir(sr.sess.strategy)}
	data := sr.doc.RunFlags.Data
	spec.Data = data
	code, err := ray.BuildPackage(ctx, spec, pkgDir)
	var tooLarge *ray.TooLargeError
	if errors.As(err, &tooLarge) && len(data) > 0 {
		fmt.Fprintf(o.Stderr, "stratbench: ray: the data (%s) does not fit in the package Ray takes (%d MiB with stratbench and the strategy): the nodes read it at %s instead, which must exist, the same, on every node of the cluster\n",
			mib(tooLarge.DataBytes), ray.MaxPackageBytes>>20, strings.Join(data, ", "))
		spec.Data, spec.NodeData = nil, data
		code, err = ray.BuildPackage(ctx, spec, pkgDir)
	}
	if err != nil {
		return usage(fmt.Errorf("--executor ray: %w", err))
	}
	uploaded, err := c.client.EnsurePackage(ctx, code)
	if err != nil {
		return fmt.Errorf("--executor ray: uploading the package: %w", err)
	}
	if uploaded {
		fmt.Fprintf(notices(o), "stratbench: ray: package %s (%.1f MiB) uploaded\n", code.URI, float64(code.Size)/(1<<20))
	} else {
		fmt.Fprintf(notices(o), "stratbench: ray: package %s already on the cluster, not sent\n", code.URI)
	}
	if err := stopEarlierJobs(ctx, c.client, sr.doc.Executor.RayJobs, notices(o)); err != nil {
		return err
	}
	cfg := rayShardConfig{
		SweepID: sr.doc.SweepID, SHA256: sr.doc.Strategy.SHA256,
		Strategy: path.Join(ray.PackageStrategy, filepath.Base(sr.sess.strategy)),
		From:     sr.doc.RunFlags.From, To: sr.doc.RunFlags.To, Timeframe: sr.doc.RunFlags.Timeframe,
		Cash: sr.doc.RunFlags.Cash, FeeBps: sr.doc.RunFlags.FeeBps,
		SlippageBps: sr.doc.RunFlags.SlippageBps, AllowShort: sr.doc.RunFlags.AllowShort, Sandbox: sr.doc.RunFlags.Sandbox,
	}
	cfg.Data = code.Manifest.Data // the package's paths: data/NAME
	if len(spec.NodeData) > 0 {
		cfg.Data = spec.NodeData
	}
	if python != "" {
		cfg.Python = sr.sess.python.Executable // --python: a path on every node
	}
	sr.doc.Executor = sweep.Executor{Kind: sweep.ExecutorRay, Address: c.client.Address(), RayJobs: sr.doc.Executor.RayJobs}
	sr.doc.Spec.Jobs = jobs
	sr.executor = &rayExecutor{client: c.client, code: code, pkgDir: pkgDir, shard: cfg, slots: jobs, doc: sr.doc, store: sr.store,
		jobs: sr.sess.store, notices: notices(o)}
	return nil
}

// notices is where the executor says what the cluster did to runs.
func notices(o SweepOptions) io.Writer {
	if !o.CI {
		return io.Discard // the sweep view owns the terminal
	}
	return o.Stderr
}

// stopEarlierJobs stops a resumed sweep's Ray jobs that still run: a
// stratbench killed outright (SIGKILL, a lost machine) leaves its job
// running on the cluster, and its runs would only compete with the resume's.
func stopEarlierJobs(ctx context.Context, client *ray.Client, ids []string, notices io.Writer) error {
	for _, id := range ids {
		job, err := client.Job(ctx, id)
		if errors.Is(err, ray.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("--executor ray: the sweep's earlier job %s: %w", id, err)
		}
		if job.Status.Terminal() {
			continue
		}
		fmt.Fprintf(notices, "stratbench: ray: the sweep's earlier job %s is still %s: stopping it\n", id, job.Status)
		if _, err := client.Stop(ctx, id); err != nil {
			return fmt.Errorf("--executor ray: stopping the sweep's earlier job %s: %w", id, err)
		}
		if _, err := client.Wait(ctx, id, 200*time.Millisecond); err != nil {
			return fmt.Errorf("--executor ray: stopping the sweep's earlier job %s: %w", id, err)
		}
	}
	return nil
}

// abandonSweep saves a sweep that could not start its runs as stopped
// (resumable) and returns err.
func abandonSweep(sr *sweepRun, err error) error {
	sr.doc.Finish(true, time.Now())
	if serr := sr.store.Save(sr.doc); serr != nil {
		err = errors.Join(err, serr)
	}
	sr.results.Close()
	return err
}

// rayExecutor runs a sweep's items on a Ray cluster (sweep.RunExecutor):
// one coordinator job per Execute, whose log brings each run's report, log
// and artifacts back into a local job folder and its result to finished.
type rayExecutor struct {
	client *ray.Client
	code   *ray.Package // the code package, uploaded
	pkgDir string       // where the packages are built (removed by close)
	shard  rayShardConfig
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
func (e *rayExecutor) Execute(ctx context.Context, items iter.Seq[sweep.Item], stop <-chan struct{}, finished func(sweep.Item, sweep.Result) error) error {
	byKey := map[string]sweep.Item{}
	var work []ray.WorkItem
	for it := range items {
		key := rayKey(it)
		payload, err := json.Marshal(rayItemPayload{Args: it.Args, Window: it.Window})
		if err != nil {
			return fmt.Errorf("%s: %w", it, err)
		}
		byKey[key.String()] = it
		work = append(work, ray.WorkItem{Key: key, Payload: payload})
	}
	if len(work) == 0 || stopped(ctx, stop) {
		return nil
	}
	cfg, err := json.Marshal(e.shard)
	if err != nil {
		return err
	}
	wp, err := ray.BuildWorkPackage(ray.WorkSpec{
		Format: ray.WorkFormat, SweepID: e.doc.SweepID,
		Shard: ray.ShardCommand{Argv: []string{"./" + ray.PackageBinary, "ray-shard", "--config", string(cfg)}},
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
	id, err = e.client.Submit(ctx, ray.CoordinatorJob(id, wp, map[string]string{"stratbench_sweep": e.doc.SweepID}))
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
	run := &rayRun{e: e, id: id, items: byKey, done: map[string]bool{}, finished: finished}
	return run.follow(ctx, stop)
}

// rayRun is one coordinator job being followed.
type rayRun struct {
	e        *rayExecutor
	id       string
	items    map[string]sweep.Item
	done     map[string]bool // keys whose result came (or was refused as a repeat)
	finished func(sweep.Item, sweep.Result) error

	stopSent  bool
	err       error           // the first error: the execution ends with it
	lost      []string        // keys the cluster gave up on
	coordErr  string          // the coordinator's own error event
	refused   *ray.Event      // a package check that failed (EventPackage)
	doneEvent *ray.DoneStatus // its last word
}

// follow reads the job's events until its log ends, stopping the job on a
// stop, a cancelled ctx or the first error.
func (r *rayRun) follow(ctx context.Context, stop <-chan struct{}) error {
	events := make(chan ray.Event)
	followed := make(chan error, 1)
	// The follower's owner is this function: it ends with the job's log
	// (or fctx), and follow waits for it below.
	fctx, cancelFollow := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelFollow()
	go func() {
		var cur ray.LogCursor
		err := r.e.client.Follow(fctx, r.id, &cur, rayFollowRetry, func(line string) error {
			ev, ok, err := ray.ParseEvent(line)
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
func (r *rayRun) stopJob() {
	if r.stopSent {
		return
	}
	r.stopSent = true
	ctx, cancel := context.WithTimeout(context.Background(), 2*ray.ResponseHeaderTimeout)
	defer cancel()
	if _, err := r.e.client.Stop(ctx, r.id); err != nil && r.err == nil {
		r.err = fmt.Errorf("ray: stopping job %s: %w", r.id, err)
	}
}

// fail records the first error and stops the job.
func (r *rayRun) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.stopJob()
}

func (r *rayRun) handle(ev ray.Event) {
	switch ev.Type {
	case ray.EventHello:
		if r.e.slots == 0 && r.e.doc.Spec.Jobs == 0 {
			r.e.doc.Spec.Jobs = ev.Slots
		}
	case ray.EventSlot:
		if ev.State == ray.SlotLost {
			fmt.Fprintf(r.e.notices, "stratbench: ray: a slot on node %.12s was lost: %s\n", ev.NodeID, ev.Reason)
		}
	case ray.EventRequeued:
		fmt.Fprintf(r.e.notices, "stratbench: ray: %s runs again elsewhere (attempt %d lost: %s)\n", ev.Key, ev.Attempt, ev.Reason)
	case ray.EventAbandoned:
		r.lost = append(r.lost, fmt.Sprintf("%s (lost %d times: %s)", ev.Key, ev.Attempts, ev.Reason))
	case ray.EventDropped:
		// Stopping: it has no result and runs on resume.
	case ray.EventError:
		r.coordErr = ev.Message
	case ray.EventPackage:
		if r.refused == nil {
			r.refused = &ev
		}
	case ray.EventDone:
		st := ev.Status
		r.doneEvent = &st
	case ray.EventResult:
		if err := r.result(ev); err != nil {
			r.fail(err)
		}
	}
}

// result takes a run's outcome: its job folder comes home, and a passed or
// failed run is handed to finished once per key.
func (r *rayRun) result(ev ray.Event) error {
	key := ev.Key.String()
	it, ok := r.items[key]
	if !ok {
		return fmt.Errorf("ray: job %s sent a result for %s, which it was not given", r.id, key)
	}
	var res rayRunResult
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
	rep, err := importRayJob(r.e.jobs, res, rayPlace{RayJob: r.id, NodeID: ev.NodeID, Host: res.Host, Attempt: ev.Attempt, NodeDir: res.NodeDir})
	if err != nil {
		return fmt.Errorf("%s: bringing its job folder back from the cluster: %w", it, err)
	}
	if r.done[key] || r.err != nil {
		return nil // never twice; after an error, nothing more is appended
	}
	if err := sameStrategy(rep, r.e.shard.SHA256); err != nil {
		return err
	}
	out, err := resultOf(rep)
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
func (r *rayRun) end(ctx context.Context, followErr error) error {
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
	jctx, cancel := context.WithTimeout(context.Background(), 2*ray.ResponseHeaderTimeout)
	defer cancel()
	job, err := r.e.client.Wait(jctx, r.id, 200*time.Millisecond)
	if err != nil {
		return fmt.Errorf("ray: job %s: %w", r.id, err)
	}
	switch {
	case r.refused != nil:
		return fmt.Errorf("ray: job %s, node %.12s: %s", r.id, r.refused.NodeID, termtext.Line(r.refused.Message))
	case job.Status == ray.JobFailed:
		msg := job.Message
		if r.coordErr != "" {
			msg = r.coordErr + "; Ray: " + msg
		}
		return fmt.Errorf("ray: job %s failed: %s", r.id, msg)
	case job.Status == ray.JobStopped && !r.stopSent:
		return fmt.Errorf("ray: job %s was stopped from outside stratbench: %s", r.id, job.Message)
	case r.stopSent:
		return nil
	case len(r.lost) > 0:
		return fmt.Errorf("ray: the cluster gave up on %s; `stratbench sweep --resume %s` runs them again", strings.Join(r.lost, ", "), r.e.doc.SweepID)
	case r.doneEvent == nil || *r.doneEvent != ray.DoneFinished:
		return fmt.Errorf("ray: job %s ended (%s) without its last event", r.id, job.Status)
	}
	return nil
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// stopped reports whether the sweep was asked to end.
func stopped(ctx context.Context, stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return ctx.Err() != nil
	}
}

// rayKey is an item's key on the cluster.
func rayKey(it sweep.Item) ray.RunKey {
	k := ray.RunKey{Fold: it.Fold, Index: int(it.Combination.Index)}
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

// RayPlaceFile, in the job folder of a run that ran on a Ray cluster, says
// where it ran (rayPlace).
const RayPlaceFile = "ray.json"

// rayPlace is where a run ran on the cluster.
type rayPlace struct {
	RayJob  string `json:"ray_job"` // the coordinator job's submission id
	NodeID  string `json:"node_id"` // Ray's node id
	Host    string `json:"host"`
	Attempt int    `json:"attempt"` // 1, or more when its node was lost before
	// NodeDir is the run's job folder on the node, when something of it
	// (a long log, large artifacts) stayed there.
	NodeDir string `json:"node_dir,omitempty"`
}

// importRayJob writes a run's job folder from what came back from its node
// (job.json, logs.jsonl, artifacts/, records/, and where it ran in RayPlaceFile)
// under the local job store, whole or not at all (built aside, then
// renamed), and returns its report. A job already there is left as it is.
func importRayJob(store *job.Store, res rayRunResult, place rayPlace) (*job.Report, error) {
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
	where, err := json.MarshalIndent(place, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, RayPlaceFile), append(where, '\n'), 0o644); err != nil {
		return nil, err
	}
	logs, err := gunzip(res.Log, RayLogReturnBytes)
	if err != nil {
		return nil, fmt.Errorf("the log: %w", err)
	}
	if res.LogCut {
		notice, _ := json.Marshal(job.LogLine{Time: time.Now().UTC(), Stream: "system",
			Line: fmt.Sprintf("stratbench: the log was cut at %d MiB when it came back from the cluster; the whole log is on %s at %s",
				RayLogReturnBytes>>20, res.Host, filepath.Join(res.NodeDir, "logs.jsonl"))})
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
		if err := unzipArtifacts(res.Artifacts, artifacts, RayArtifactsReturnBytes); err != nil {
			return nil, fmt.Errorf("the artifacts: %w", err)
		}
	} else if res.ArtifactsBytes > 0 {
		note := fmt.Sprintf("The artifacts of this run (%d bytes, over the %d MiB that come back from the cluster) are on %s at %s\n",
			res.ArtifactsBytes, RayArtifactsReturnBytes>>20, res.Host, filepath.Join(res.NodeDir, "artifacts"))
		if err := os.WriteFile(filepath.Join(artifacts, "ON-THE-NODE.txt"), []byte(note), 0o644); err != nil {
			return nil, err
		}
	}
	records := filepath.Join(tmp, job.RecordsDir)
	if err := os.Mkdir(records, 0o755); err != nil {
		return nil, err
	}
	if len(res.Records) > 0 {
		if err := unzipArtifacts(res.Records, records, RayRecordsReturnBytes); err != nil {
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
