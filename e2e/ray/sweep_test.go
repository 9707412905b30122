package ray

// End-to-end tests of `sweep --executor ray` against a real local Ray
// cluster (internal/raytest: a head without CPUs, two worker nodes of one
// CPU each, as separate `ray start` processes on this machine): a sweep on
// the cluster gives the runs of the same sweep run locally; a worker node
// killed while it runs a combination loses nothing and duplicates nothing,
// and that combination runs again on the other node; SIGINT stops the Ray
// job with on_finish kept and --resume finishes the sweep; a job stopped
// from outside is reported; a stratbench killed outright resumes, stopping
// its orphaned job first; a walk-forward is the local one; the refusals
// come before anything is sent. raytest proves at the end that nothing of
// the cluster is left.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"stratbench/app"
	"stratbench/internal/e2etest"
	"stratbench/internal/raytest"
	"stratbench/job"
	"stratbench/sweep"
	"stratbench/sweep/ray"
)

// rayEnv is an env whose sweeps run on a cluster.
type rayEnv struct {
	*e2etest.Env
	c       *raytest.Cluster
	nodeTmp string // TMPDIR of the cluster's processes: the nodes' job folders live under it
}

func (e *rayEnv) rayArgs(args ...string) []string {
	return append(args, "--executor", "ray", "--ray-address", e.c.Dashboard)
}

// TestRaySweep runs its cases on one cluster (its start is most of the
// cost); the case that kills a node comes last.
func TestRaySweep(t *testing.T) {
	e2etest.SkipShort(t)
	nodeTmp := t.TempDir()
	c := raytest.Start(t, raytest.Options{
		HeadCPUs: 0,
		Workers:  []raytest.WorkerOptions{{Name: "node2", CPUs: 1}, {Name: "node3", CPUs: 1}},
		Env:      []string{"TMPDIR=" + nodeTmp},
	})
	t.Logf("cluster (head + node2 + node3) started in %v", c.StartTook.Round(time.Millisecond))
	newRayEnv := func(t *testing.T) *rayEnv { return &rayEnv{Env: e2etest.NewEnv(t), c: c, nodeTmp: nodeTmp} }

	t.Run("equals local", func(t *testing.T) { testRayEqualsLocal(t, newRayEnv(t)) })
	t.Run("walk-forward equals local", func(t *testing.T) { testRayWalkForward(t, newRayEnv(t)) })
	t.Run("stop and resume", func(t *testing.T) { testRayStopResume(t, newRayEnv(t)) })
	t.Run("stopped from outside", func(t *testing.T) { testRayStoppedOutside(t, newRayEnv(t)) })
	t.Run("killed outright, resumed", func(t *testing.T) { testRayKilledResumed(t, newRayEnv(t)) })
	t.Run("template lost", func(t *testing.T) { testRayTemplateLost(t, newRayEnv(t)) })
	t.Run("template lost while stopping", func(t *testing.T) { testRayLostWhileStopping(t, newRayEnv(t)) })
	t.Run("tampered upload", func(t *testing.T) { testRayTamperedUpload(t, newRayEnv(t)) })
	t.Run("tampered unpacked", func(t *testing.T) { testRayTamperedUnpacked(t, newRayEnv(t)) })
	t.Run("breakpoint goes on", func(t *testing.T) { testRayBreakpoint(t, newRayEnv(t)) })
	t.Run("node lost", func(t *testing.T) { testRayNodeLost(t, newRayEnv(t)) })

	// Nothing of ours runs on the cluster any more.
	cl, err := ray.New(c.Dashboard, ray.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	jobs, err := cl.Jobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Type == "SUBMISSION" && !j.Status.Terminal() {
			t.Errorf("Ray job %s still %s after the tests", j.SubmissionID, j.Status)
		}
	}
}

// testRayEqualsLocal: the same grid locally (--jobs 2) and on the cluster
// gives, per index, the same fingerprint, orders hash and metrics; the
// document names the executor and its Ray job; every run's job folder is
// local (report, log, records, where it ran), so status and logs work.
func testRayEqualsLocal(t *testing.T, e *rayEnv) {
	args := []string{"sweep", e2etest.SweepStrategy, "--ci", "--output", "json", "--grid", "fast=3,5", "--grid", "slow=10:30:10",
		"--from", "2026-01-05", "--to", "2026-01-05 12:00:00"}
	local := e.Run(append(args, "--jobs", "2")...)
	if local.Code != 0 {
		t.Fatalf("local: exit %d\n%s", local.Code, local.Stderr)
	}
	began := time.Now()
	remote := e.Run(e.rayArgs(args...)...)
	if remote.Code != 0 {
		t.Fatalf("ray: exit %d\n%s\n%s", remote.Code, remote.Stdout, remote.Stderr)
	}
	t.Logf("6 runs on the cluster: %v, submission to the end", time.Since(began).Round(time.Millisecond))
	ld, rd := e2etest.DecodeSweep(t, local.Stdout), e2etest.DecodeSweep(t, remote.Stdout)
	if rd.Status != sweep.StatusPassed || rd.Counts != ld.Counts || len(rd.Runs) != 6 {
		t.Fatalf("ray: status %s counts %+v, local counts %+v", rd.Status, rd.Counts, ld.Counts)
	}
	if rd.Executor.Kind != sweep.ExecutorRay || rd.Executor.Address != e.c.Dashboard || len(rd.Executor.RayJobs) != 1 {
		t.Errorf("executor %+v", rd.Executor)
	}
	want := map[int64]sweep.Result{}
	for _, r := range ld.Runs {
		want[r.Index] = r
	}
	for _, r := range rd.Runs {
		w := want[r.Index]
		if r.Fingerprint != w.Fingerprint || r.OrdersHash != w.OrdersHash || string(r.Metrics) != string(w.Metrics) || r.Status != w.Status {
			t.Errorf("index %d: ray %s %s %s, local %s %s %s", r.Index, r.Fingerprint, r.OrdersHash, r.Metrics, w.Fingerprint, w.OrdersHash, w.Metrics)
		}
		delete(want, r.Index)
		dir := filepath.Join(e.Home, "jobs", r.JobID)
		for _, f := range []string{"job.json", "logs.jsonl", app.RayPlaceFile, filepath.Join(job.RecordsDir, job.RecordEquity.FileName())} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("index %d: job folder: %v", r.Index, err)
			}
		}
	}
	if len(want) != 0 {
		t.Errorf("indices missing on the cluster: %v", want)
	}
	st := e.Run("status", rd.Runs[0].JobID, "--output", "json")
	if rep := e2etest.DecodeReport(t, st.Stdout); st.Code != 0 || rep.Sweep == nil || rep.Sweep.ID != rd.SweepID {
		t.Errorf("status of a Ray run: exit %d %s", st.Code, st.Stderr)
	}
	if lg := e.Run("logs", rd.Runs[0].JobID); lg.Code != 0 || !strings.Contains(lg.Stdout, "first bar") {
		t.Errorf("logs of a Ray run: exit %d\n%s%s", lg.Code, lg.Stdout, lg.Stderr)
	}
}

// testRayBreakpoint: breakpoint() in a run on the cluster does not stop
// it (no person can answer a prompt there): each run passes and its log,
// brought home, holds one notice naming the file and line.
func testRayBreakpoint(t *testing.T, e *rayEnv) {
	args := append([]string{"sweep", e2etest.Strategy("debug_breakpoint.py"), "--ci", "--output", "json", "--grid", "warm_check=1,2"},
		e2etest.BreakpointWindow...)
	r := e.Run(e.rayArgs(args...)...)
	doc := e2etest.DecodeSweep(t, r.Stdout)
	if r.Code != 0 || doc.Counts.Passed != 2 || doc.Executor.Kind != sweep.ExecutorRay {
		t.Fatalf("exit %d, counts %+v, executor %+v\n%s", r.Code, doc.Counts, doc.Executor, r.Stderr)
	}
	for _, run := range doc.Runs {
		if got := e.LogLines(run.JobID, e2etest.BreakpointNotice); len(got) != 1 {
			t.Errorf("run %d: %d notices, want 1: %q", run.Index, len(got), got)
		}
	}
}

// testRayWalkForward: a walk-forward on the cluster is two Ray jobs (the
// folds' train sweeps, then each fold's best on its test window) and gives
// the local walk-forward's runs, folds and stitched result.
func testRayWalkForward(t *testing.T, e *rayEnv) {
	args := []string{"sweep", e2etest.SweepStrategy, "--ci", "--output", "json", "--grid", "fast=3,8", "--grid", "slow=30",
		"--walk-forward", "train=2d,test=1d", "--from", "2026-01-05", "--to", "2026-01-08 23:59:00"} // 2 folds
	local := e.Run(append(args, "--jobs", "2")...)
	remote := e.Run(e.rayArgs(args...)...)
	if local.Code != 0 || remote.Code != 0 {
		t.Fatalf("exit %d local, %d ray\n%s", local.Code, remote.Code, remote.Stderr)
	}
	ld, rd := e2etest.DecodeSweep(t, local.Stdout), e2etest.DecodeSweep(t, remote.Stdout)
	if len(rd.Executor.RayJobs) != 2 || rd.Counts != ld.Counts || len(rd.Runs) != 6 || len(rd.WalkForward.Folds) != 2 {
		t.Fatalf("ray: executor %+v counts %+v (local %+v)", rd.Executor, rd.Counts, ld.Counts)
	}
	key := func(r sweep.Result) string { return fmt.Sprintf("%v/%s/%d", *r.Fold, r.Phase, r.Index) }
	want := map[string]sweep.Result{}
	for _, r := range ld.Runs {
		want[key(r)] = r
	}
	for _, r := range rd.Runs {
		w, ok := want[key(r)]
		if !ok || r.Fingerprint != w.Fingerprint || r.OrdersHash != w.OrdersHash || string(r.Metrics) != string(w.Metrics) {
			t.Errorf("%s: ray %s %s, local %s %s", key(r), r.Fingerprint, r.OrdersHash, w.Fingerprint, w.OrdersHash)
		}
	}
	lw, _ := json.Marshal(ld.WalkForward.OutOfSample)
	rw, _ := json.Marshal(rd.WalkForward.OutOfSample)
	if string(lw) != string(rw) {
		t.Errorf("stitched out-of-sample: ray %s, local %s", rw, lw)
	}
}

// start starts a sweep on the cluster in the background.
func (e *rayEnv) start(args ...string) *e2etest.SweepProcess {
	e.T.Helper()
	return e.StartSweep(e.rayArgs(args...)...)
}

// startInFlight starts a sweep of four slow runs on the cluster and
// waits until a run of it is in flight on node; it returns the sweep and
// its id.
func (e *rayEnv) startInFlight(t *testing.T, node *raytest.Node) (*e2etest.SweepProcess, string) {
	t.Helper()
	p := e.start("sweep", e2etest.SweepStrategy, "--ci", "--output", "jsonl", "--from", "2026-01-05", "--to", "2026-01-05 04:00:00",
		"--grid", "fast=2:5:1", "--grid", "slow=20", "--param", "slow_ms=4")
	id := e.sweepID(t, 60*time.Second)
	e.runInFlight(t, node, id, 3*time.Minute)
	return p, id
}

// client is a client of the cluster's REST API, closed when t ends.
func (e *rayEnv) client(t *testing.T) *ray.Client {
	t.Helper()
	cl, err := ray.New(e.c.Dashboard, ray.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// runInFlight waits until a shard on node runs a job of sweep id that has
// started its strategy: a job folder on the nodes (under their TMPDIR)
// whose report says running, whose log has the strategy's "first bar", and
// whose owner record names a shard process of that node.
func (e *rayEnv) runInFlight(t *testing.T, node *raytest.Node, id string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ps, err := e.c.NodeProcesses(node)
		if err != nil {
			t.Fatal(err)
		}
		shards := map[int]bool{}
		for _, p := range ps {
			if strings.Contains(p.Cmdline, "ray-shard") {
				shards[p.PID] = true
			}
		}
		dirs, _ := filepath.Glob(filepath.Join(e.nodeTmp, "stratbench-ray", id, "jobs", "*"))
		for _, dir := range dirs {
			var owner struct {
				PID int `json:"pid"`
			}
			var rep job.Report
			raw, err1 := os.ReadFile(filepath.Join(dir, "owner.json"))
			rj, err2 := os.ReadFile(filepath.Join(dir, "job.json"))
			logs, err3 := os.ReadFile(filepath.Join(dir, "logs.jsonl"))
			if err1 != nil || err2 != nil || err3 != nil || json.Unmarshal(raw, &owner) != nil || json.Unmarshal(rj, &rep) != nil {
				continue
			}
			if shards[owner.PID] && rep.Status == job.StatusRunning && bytes.Contains(logs, []byte("first bar")) {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no run in flight on %s after %v", node.Name, timeout)
}

// sweepID waits for the sweep's folder (named by its id: the hidden
// folder it is created in is not it yet).
func (e *rayEnv) sweepID(t *testing.T, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir(filepath.Join(e.Home, "sweeps"))
		if len(entries) == 1 && sweep.IsID(entries[0].Name()) {
			return entries[0].Name()
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no sweep folder after %v", timeout)
	return ""
}

// uniqueResults reads results.jsonl and fails on an index twice.
func (e *rayEnv) uniqueResults(t *testing.T, id string) map[int64]sweep.Result {
	t.Helper()
	out := map[int64]sweep.Result{}
	for _, r := range e.ReadResults(id) {
		if _, dup := out[r.Index]; dup {
			t.Fatalf("index %d twice in results.jsonl", r.Index)
		}
		out[r.Index] = r
	}
	return out
}

// testRayStopResume: SIGINT while runs are in flight on the cluster stops
// the Ray job; the runs in flight end as stopped runs whose on_finish ran
// there (their job folders come back and say so); the sweep is saved as
// stopped, exit 130, no Ray job left running; --resume on the cluster runs
// only what has no result.
func testRayStopResume(t *testing.T, e *rayEnv) {
	p, id := e.startInFlight(t, e.c.Worker("node2"))
	p.Cmd.Process.Signal(syscall.SIGINT)
	lines, code := p.Wait(t)
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, p.Stderr)
	}
	var summary struct {
		Sweep sweep.Document `json:"sweep"`
	}
	if len(lines) == 0 || json.Unmarshal([]byte(lines[len(lines)-1]), &summary) != nil {
		t.Fatalf("no summary: %q", lines)
	}
	if summary.Sweep.Status != sweep.StatusStopped || summary.Sweep.Counts.Done >= 4 || len(summary.Sweep.Executor.RayJobs) != 1 {
		t.Fatalf("summary %+v", summary.Sweep)
	}
	stopped := 0
	reports, err := job.ReadStore(e.Home).List()
	if err != nil {
		t.Fatal(err)
	}
	for _, rep := range reports {
		if rep.Status == job.StatusStopped {
			stopped++
			if rep, err = job.ReadStore(e.Home).Load(rep.JobID); err != nil { // List keeps no hooks
				t.Fatal(err)
			}
			if rep.Hooks["on_finish"].Count != 1 || rep.Sweep == nil || rep.Sweep.ID != id {
				t.Errorf("stopped run %s: on_finish ran %d times, sweep %+v", rep.JobID, rep.Hooks["on_finish"].Count, rep.Sweep)
			}
			if lg := e.Run("logs", rep.JobID); !strings.Contains(lg.Stdout, "on_finish ran") {
				t.Errorf("stopped run %s: its log has no \"on_finish ran\":\n%s", rep.JobID, lg.Stdout)
			}
		}
	}
	if stopped == 0 {
		t.Fatalf("no stopped run came back from the cluster")
	}
	cl := e.client(t)
	if job, err := cl.Job(context.Background(), summary.Sweep.Executor.RayJobs[0]); err != nil || job.Status != ray.JobStopped {
		t.Fatalf("the Ray job after SIGINT: %+v, %v; want STOPPED", job, err)
	}
	before := len(e.uniqueResults(t, id))

	r := e.Run(e.rayArgs("sweep", "--resume", id, "--ci", "--output", "json")...)
	if r.Code != 0 {
		t.Fatalf("resume: exit %d\n%s", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "already on the cluster, not sent") {
		t.Errorf("the resume sent the unchanged package again:\n%s", r.Stderr)
	}
	doc := e2etest.DecodeSweep(t, r.Stdout)
	if doc.Status != sweep.StatusPassed || doc.Counts.Done != 4 || len(doc.Executor.RayJobs) != 2 {
		t.Fatalf("after resume: %s %+v %+v", doc.Status, doc.Counts, doc.Executor)
	}
	if got := e.uniqueResults(t, id); len(got) != 4 {
		t.Fatalf("%d results after resume (%d before), want 4", len(got), before)
	}
}

// testRayStoppedOutside: a Ray job stopped by someone else (here, the
// test through the REST API) ends the sweep with exit 1 and Ray's account,
// saved as stopped.
func testRayStoppedOutside(t *testing.T, e *rayEnv) {
	p, id := e.startInFlight(t, e.c.Worker("node2"))
	doc := e.ReadSweep(id)
	if len(doc.Executor.RayJobs) != 1 {
		t.Fatalf("sweep.json: executor %+v", doc.Executor)
	}
	cl := e.client(t)
	if _, err := cl.Stop(context.Background(), doc.Executor.RayJobs[0]); err != nil {
		t.Fatal(err)
	}
	_, code := p.Wait(t)
	if code != 1 || !strings.Contains(p.Stderr.String(), "was stopped from outside stratbench") {
		t.Fatalf("exit %d, want 1 naming the outside stop\n%s", code, p.Stderr)
	}
	if doc := e.ReadSweep(id); doc.Status != sweep.StatusStopped {
		t.Errorf("sweep.json: status %s, want stopped", doc.Status)
	}
	e.uniqueResults(t, id)
}

// testRayKilledResumed: a stratbench killed outright (SIGKILL) leaves its
// Ray job running; --resume on the cluster stops that job first, then
// finishes the sweep with every combination once.
func testRayKilledResumed(t *testing.T, e *rayEnv) {
	p, id := e.startInFlight(t, e.c.Worker("node2"))
	p.Cmd.Process.Kill()
	p.Wait(t)
	doc := e.ReadSweep(id)
	if len(doc.Executor.RayJobs) != 1 {
		t.Fatalf("sweep.json: executor %+v", doc.Executor)
	}
	cl := e.client(t)
	first := doc.Executor.RayJobs[0]
	t.Cleanup(func() { cl.Stop(context.Background(), first) }) // whatever happens below
	if job, err := cl.Job(context.Background(), first); err != nil || job.Status.Terminal() {
		t.Fatalf("the Ray job after SIGKILL: %+v, %v; want it still running", job, err)
	}
	r := e.Run(e.rayArgs("sweep", "--resume", id, "--ci", "--output", "json")...)
	if r.Code != 0 || !strings.Contains(r.Stderr, "earlier job "+first+" is still RUNNING: stopping it") {
		t.Fatalf("resume: exit %d\n%s", r.Code, r.Stderr)
	}
	if job, err := cl.Job(context.Background(), first); err != nil || job.Status != ray.JobStopped {
		t.Errorf("the first Ray job after the resume: %+v, %v; want STOPPED", job, err)
	}
	if got := e.uniqueResults(t, id); len(got) != 4 {
		t.Fatalf("%d results after resume, want 4", len(got))
	}
}

// testRayTemplateLost: the warm template a shard's run was forked from is
// killed while the run waits; the shard starts the run again, the sweep
// passes with that second job's result, and the lost job's folder is gone
// from the node.
func testRayTemplateLost(t *testing.T, e *rayEnv) {
	// A name of its own: the template's command line names the strategy
	// as the cluster unpacked it, in a folder of Ray's.
	name := fmt.Sprintf("lost_%d.py", time.Now().UnixNano())
	strategy := e2etest.CopyStrategy(t, "testdata/strategies/warm_modes.py", name)
	until := filepath.Join(t.TempDir(), "go")
	p := e.start("sweep", strategy, "--ci", "--output", "jsonl", "--from", "2026-01-05",
		"--to", "2026-01-05 04:00:00", "--grid", "mode=wait", "--param", "until="+until)
	id := e.sweepID(t, 60*time.Second)
	lost := e.nodeRunSaying(t, id, "waiting", 3*time.Minute)
	e2etest.KillTemplateOf(t, name)
	e.nodeRunSaying(t, id, "waiting", 3*time.Minute, filepath.Base(lost))
	if err := os.WriteFile(until, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, code := p.Wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.Stderr)
	}
	if want := "job " + filepath.Base(lost) + " "; !strings.Contains(p.Stderr.String(), want) ||
		!strings.Contains(p.Stderr.String(), "was lost with its warm template and ran again") {
		t.Errorf("stderr does not name the lost job %s:\n%s", filepath.Base(lost), p.Stderr)
	}
	got := e.uniqueResults(t, id)
	if len(got) != 1 || got[0].Status != sweep.RunPassed || got[0].JobID == filepath.Base(lost) {
		t.Fatalf("results %+v, want index 0 passed, from the job after the lost %s", got, filepath.Base(lost))
	}
	if _, err := os.Stat(lost); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the lost job's folder on the node: %v, want it removed", err)
	}
}

// testRayLostWhileStopping: the warm template of a shard's run is killed
// while the sweep stops (SIGINT; the run is in its on_finish on a node):
// the run is neither recorded nor started again, and comes back as
// nothing (no job here, its folder gone from the node); the sweep exits
// 130, stopped, and a resume on the cluster runs it.
func testRayLostWhileStopping(t *testing.T, e *rayEnv) {
	name := fmt.Sprintf("lost_stopping_%d.py", time.Now().UnixNano())
	strategy := e2etest.CopyStrategy(t, "testdata/strategies/warm_modes.py", name)
	until := filepath.Join(t.TempDir(), "go")
	// mode=linger waits in on_data, then in on_finish, until the file exists.
	p := e.start("sweep", strategy, "--ci", "--output", "jsonl", "--from", "2026-01-05",
		"--to", "2026-01-05 04:00:00", "--grid", "mode=linger", "--param", "until="+until)
	id := e.sweepID(t, 60*time.Second)
	lost := e.nodeRunSaying(t, id, "waiting", 3*time.Minute)
	p.Cmd.Process.Signal(syscall.SIGINT)
	e.nodeRunSaying(t, id, "finishing", 3*time.Minute)
	e2etest.KillTemplateOf(t, name)
	if _, code := p.Wait(t); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, p.Stderr)
	}
	if !strings.Contains(p.Stderr.String(), "job "+filepath.Base(lost)+" ") ||
		!strings.Contains(p.Stderr.String(), "was lost with its warm template and has no result (the sweep was stopping)") {
		t.Errorf("stderr does not name the lost job %s:\n%s", filepath.Base(lost), p.Stderr)
	}
	if got := e.uniqueResults(t, id); len(got) != 0 {
		t.Fatalf("results %+v, want none: the one run in flight was lost while the sweep stopped", got)
	}
	if doc := e.ReadSweep(id); doc.Status != sweep.StatusStopped || doc.Counts.Done != 0 {
		t.Errorf("sweep.json: %s, %+v; want stopped with nothing done", doc.Status, doc.Counts)
	}
	if _, err := os.Stat(lost); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the lost job's folder on the node: %v, want it removed", err)
	}
	// Not started again: no job came back, and the node holds none.
	if reports, err := job.ReadStore(e.Home).List(); err != nil || len(reports) != 0 {
		t.Errorf("jobs here %d (%v), want none", len(reports), err)
	}
	if left, _ := filepath.Glob(filepath.Join(e.nodeTmp, "stratbench-ray", id, "jobs", "*")); len(left) != 0 {
		t.Errorf("job folders left on the nodes: %v", left)
	}
	if err := os.WriteFile(until, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.Run(e.rayArgs("sweep", "--resume", id, "--ci", "--output", "json")...)
	if r.Code != 0 {
		t.Fatalf("resume: exit %d\n%s", r.Code, r.Stderr)
	}
	if got := e.uniqueResults(t, id); len(got) != 1 || got[0].Status != sweep.RunPassed || got[0].JobID == filepath.Base(lost) {
		t.Fatalf("results after the resume %+v, want index 0 passed from a job other than the lost %s", got, filepath.Base(lost))
	}
}

// nodeRunSaying waits until a job of sweep id on the nodes (under their
// TMPDIR), none of except (job ids), is running and its strategy has
// printed text, and returns its folder.
func (e *rayEnv) nodeRunSaying(t *testing.T, id, text string, timeout time.Duration, except ...string) string {
	t.Helper()
	return e2etest.WaitForJobSaying(t, timeout, filepath.Join(e.nodeTmp, "stratbench-ray", id, "jobs", "*"), text, nil, except)
}

// testRayNodeLost: node2 is killed (every process of it, as a machine that
// vanishes) while it runs a combination; the sweep finishes on node3 with
// every combination once, and the one lost with node2 ran again there (its
// job folder says attempt 2 on node3).
func testRayNodeLost(t *testing.T, e *rayEnv) {
	node2, node3 := e.c.Worker("node2"), e.c.Worker("node3")
	p, id := e.startInFlight(t, node2)
	if err := e.c.Kill(node2); err != nil {
		t.Fatal(err)
	}
	_, code := p.Wait(t)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, p.Stderr)
	}
	if !strings.Contains(p.Stderr.String(), "runs again elsewhere") {
		t.Errorf("no notice of the run lost with node2:\n%s", p.Stderr)
	}
	got := e.uniqueResults(t, id)
	if len(got) != 4 {
		t.Fatalf("%d results, want 4", len(got))
	}
	again := 0
	for _, r := range got {
		raw, err := os.ReadFile(filepath.Join(e.Home, "jobs", r.JobID, app.RayPlaceFile))
		if err != nil {
			t.Fatal(err)
		}
		var place struct {
			NodeID  string `json:"node_id"`
			Attempt int    `json:"attempt"`
		}
		if err := json.Unmarshal(raw, &place); err != nil {
			t.Fatal(err)
		}
		if place.Attempt > 1 {
			again++
			if place.NodeID != node3.ID {
				t.Errorf("index %d ran again on %s, want node3 %s", r.Index, place.NodeID, node3.ID)
			}
		}
	}
	if again != 1 {
		t.Errorf("%d runs ran again, want the one lost with node2\n%s", again, p.Stderr)
	}
}
