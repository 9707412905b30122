package ray

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"stratbench/internal/raytest"
	"stratbench/internal/testenv"
)

// Integration tests: the client against the real local cluster.

func client(t *testing.T, c *raytest.Cluster) *Client {
	t.Helper()
	cl, err := New(c.Dashboard, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

var submissions atomic.Int64

// submissionID is unique in the test run and names the test.
func submissionID(t *testing.T) string {
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	return fmt.Sprintf("sbtest-%s-%d-%d", name, os.Getpid(), submissions.Add(1))
}

func within(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// pyCommand is a shell command running a Python script with the python the
// node's PATH gives (the cluster's: its virtual environment comes first).
func pyCommand(script string) string {
	return "python -u -c '" + strings.ReplaceAll(script, "'", `'"'"'`) + "'"
}

func TestPreflight(t *testing.T) {
	c := cluster(t)
	v, err := client(t, c).Preflight(within(t, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if v.JobAPI != JobAPIVersion || v.Ray == "" || v.Session == "" {
		t.Fatalf("version %+v", v)
	}
	t.Logf("cluster: Ray %s, job API %s", v.Ray, v.JobAPI)
}

// typicalPackage builds a package as a sweep would send it: the binary (the
// test binary, of stratbench's size), the example strategy's folder, and a
// week of minute bars for three symbols.
func typicalPackage(t *testing.T, dir string) *Package {
	t.Helper()
	data := writeWeekCSV(t)
	pkg, err := BuildPackage(context.Background(), PackageSpec{
		Binary:   selfBinary(t),
		Strategy: filepath.Join(testenv.Root(t), "python", "example"),
		Data:     []string{data},
	}, dir)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

// TestPackageUploadOnce: a package is uploaded once; the same content,
// built again, is found on the cluster and not sent.
func TestPackageUploadOnce(t *testing.T) {
	c := cluster(t)
	cl := client(t, c)
	ctx := within(t, 2*time.Minute)
	began := time.Now()
	pkg := typicalPackage(t, t.TempDir())
	built := time.Since(began)
	if exists, err := cl.PackageExists(ctx, pkg.URI); err != nil || exists {
		t.Fatalf("before the upload: exists %v, %v", exists, err)
	}
	began = time.Now()
	uploaded, err := cl.EnsurePackage(ctx, pkg)
	if err != nil || !uploaded {
		t.Fatalf("first EnsurePackage: uploaded %v, %v", uploaded, err)
	}
	t.Logf("typical package (binary %s, example strategy, a week of minute bars for 3 symbols): %.1f MiB, built in %v, uploaded in %v",
		mib(pkg.Manifest.Files[indexOf(pkg.Manifest.Files, PackageBinary)].Size), float64(pkg.Size)/(1<<20), built.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))

	again := typicalPackage(t, t.TempDir())
	if again.URI != pkg.URI {
		t.Fatalf("the same inputs built again: %s, then %s", pkg.URI, again.URI)
	}
	began = time.Now()
	uploaded, err = cl.EnsurePackage(ctx, again)
	if err != nil || uploaded {
		t.Fatalf("second EnsurePackage: uploaded %v, %v (want found, not sent)", uploaded, err)
	}
	t.Logf("unchanged package: found in %v, not sent", time.Since(began).Round(time.Millisecond))
}

func indexOf(es []Entry, path string) int {
	for i, e := range es {
		if e.Path == path {
			return i
		}
	}
	return 0
}

// runHelperJob submits the package's helper on node2 and returns its
// report, the job and the full log.
func runHelperJob(t *testing.T, ctx context.Context, cl *Client, pkg *Package, req JobRequest) (helperReport, JobInfo, string) {
	t.Helper()
	req.Entrypoint = "./" + PackageBinary
	req.RuntimeEnv.WorkingDir = pkg.URI
	req.RuntimeEnv.EnvVars = map[string]string{helperEnv: "verify"}
	id, err := cl.Submit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var rep helperReport
	var log strings.Builder
	var cur LogCursor
	err = cl.Follow(ctx, id, &cur, time.Second, func(line string) error {
		log.WriteString(line + "\n")
		if s, ok := strings.CutPrefix(line, helperLine); ok {
			return json.Unmarshal([]byte(s), &rep)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	job, err := cl.Job(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if job.Status != JobSucceeded {
		t.Fatalf("job %s: %s: %s\nlog:\n%s", id, job.Status, job.Message, log.String())
	}
	return rep, job, log.String()
}

// TestPackageRunsOnWorker: the package, unpacked by Ray on node2, holds
// every file as built (the helper checks each against the manifest), the
// binary is executable, and the job ran on node2: Ray says so
// (driver_node_id) and so does the node's own tag.
func TestPackageRunsOnWorker(t *testing.T) {
	c := cluster(t)
	cl := client(t, c)
	ctx := within(t, 3*time.Minute)
	pkg := typicalPackage(t, t.TempDir())
	if _, err := cl.EnsurePackage(ctx, pkg); err != nil {
		t.Fatal(err)
	}
	rep, job, log := runHelperJob(t, ctx, cl, pkg, JobRequest{
		SubmissionID: submissionID(t), EntrypointNumCPUs: 1,
		EntrypointResources: map[string]float64{"node2": 1},
	})
	if rep.Files != len(pkg.Manifest.Files) || !rep.Executable || len(rep.Data) != 1 {
		t.Fatalf("helper report %+v for %d files; log:\n%s", rep, len(pkg.Manifest.Files), log)
	}
	if node2 := c.Worker("node2"); job.DriverNodeID != node2.ID || !strings.HasSuffix(rep.Node, "/node2") {
		t.Fatalf("job ran on node %s (tag %q), want node2 %s", job.DriverNodeID, rep.Node, node2.ID)
	}
}

// TestPlacement: a job that reserves a CPU runs where CPUs are (node2: the
// head has none), never on the head by accident; a job that says OnHead
// runs on the head.
func TestPlacement(t *testing.T) {
	c := cluster(t)
	cl := client(t, c)
	ctx := within(t, 2*time.Minute)
	for _, tc := range []struct {
		name string
		req  JobRequest
		want *raytest.Node
	}{
		{"a CPU", JobRequest{EntrypointNumCPUs: 1}, c.Worker("node2")},
		{"on the head", JobRequest{OnHead: true}, c.Head},
	} {
		tc.req.Entrypoint = "echo placed"
		tc.req.SubmissionID = submissionID(t)
		id, err := cl.Submit(ctx, tc.req)
		if err != nil {
			t.Fatal(err)
		}
		job, err := cl.Wait(ctx, id, 200*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if job.Status != JobSucceeded || job.DriverNodeID != tc.want.ID {
			t.Errorf("%s: %s on node %s (%s), want SUCCEEDED on %s %s", tc.name, job.Status, job.DriverNodeID, job.Message, tc.want.Name, tc.want.ID)
		}
	}
}

// TestFollowStreams: lines reach the client while the job runs (the job
// waits for a file the test creates only once it has the first line), a
// new Follow with the same cursor goes on without repeating a line, and
// the last line, without a newline, arrives once the job is over.
func TestFollowStreams(t *testing.T) {
	c := cluster(t)
	cl := client(t, c)
	ctx := within(t, 2*time.Minute)
	gate := filepath.Join(t.TempDir(), "gate")
	id, err := cl.Submit(ctx, JobRequest{
		SubmissionID: submissionID(t),
		Entrypoint: pyCommand(`
import os, sys, time
print("first")
while not os.path.exists(os.environ["GATE"]):
    time.sleep(0.05)
print("second")
sys.stdout.write("last, without a newline")
`),
		RuntimeEnv:          RuntimeEnv{EnvVars: map[string]string{"GATE": gate}},
		EntrypointNumCPUs:   1,
		EntrypointResources: map[string]float64{"node2": 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	var cur LogCursor
	var lines []string
	errFirst := errors.New("got the first line")
	err = cl.Follow(ctx, id, &cur, time.Second, func(line string) error {
		lines = append(lines, line)
		if line == "first" {
			return errFirst
		}
		return nil
	})
	if !errors.Is(err, errFirst) {
		t.Fatalf("Follow ended with %v before the first line; lines %q", err, lines)
	}
	if job, err := cl.Job(ctx, id); err != nil || job.Status.Terminal() {
		t.Fatalf("job %+v, %v: want it still running, waiting for the gate", job, err)
	}
	consumed := cur.Lines
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var rest []string
	if err := cl.Follow(ctx, id, &cur, time.Second, func(line string) error {
		rest = append(rest, line)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(rest, "|") != "second|last, without a newline" {
		t.Fatalf("after the first line: %q (before: %q), want the rest only", rest, lines)
	}
	if cur.Lines != consumed+2 {
		t.Fatalf("cursor at %d lines, want %d", cur.Lines, consumed+2)
	}
	// The whole log, read once, holds Ray's lines, then the job's.
	full, err := cl.Logs(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(full, "first\nsecond\nlast, without a newline") || int64(len(full)) != cur.Offset {
		t.Fatalf("log %q (%d bytes), cursor at %d", full, len(full), cur.Offset)
	}
}

// stopScript prints "ready", and on SIGTERM prints "got SIGTERM", works
// FINISH seconds and prints "finished cleanly".
const stopScript = `
import os, signal, sys, time
def on_term(sig, frame):
    print("got SIGTERM", flush=True)
    time.sleep(float(os.environ["FINISH"]))
    print("finished cleanly", flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, on_term)
print("ready", flush=True)
while True:
    time.sleep(0.1)
`

// TestStopGrace measures Ray's stop: SIGTERM to the entrypoint, then
// SIGKILL after the stop grace. With Ray's default grace, an entrypoint
// that needs 6 s after SIGTERM is killed before it finishes; with the
// grace raised for the job (StopGraceEnv in its runtime_env), it finishes.
func TestStopGrace(t *testing.T) {
	c := cluster(t)
	cl := client(t, c)
	ctx := within(t, 2*time.Minute)
	type run struct {
		name  string
		grace string // "" for Ray's default
		id    string
	}
	runs := []*run{{name: "default grace"}, {name: "grace 30 s", grace: "30"}}
	for _, r := range runs {
		env := map[string]string{"FINISH": "6"}
		if r.grace != "" {
			env[StopGraceEnv] = r.grace
		}
		id, err := cl.Submit(ctx, JobRequest{
			SubmissionID: submissionID(t), Entrypoint: pyCommand(stopScript),
			RuntimeEnv: RuntimeEnv{EnvVars: env}, EntrypointNumCPUs: 1,
		})
		if err != nil {
			t.Fatal(err)
		}
		r.id = id
	}
	errReady := errors.New("ready")
	for _, r := range runs {
		var cur LogCursor
		err := cl.Follow(ctx, r.id, &cur, time.Second, func(line string) error {
			if line == "ready" {
				return errReady
			}
			return nil
		})
		if !errors.Is(err, errReady) {
			t.Fatalf("%s: the job never said ready: %v", r.name, err)
		}
	}
	for _, r := range runs {
		began := time.Now()
		stopped, err := cl.Stop(ctx, r.id)
		if err != nil || !stopped {
			t.Fatalf("%s: Stop = %v, %v", r.name, stopped, err)
		}
		job, err := cl.Wait(ctx, r.id, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(began)
		log, err := cl.Logs(ctx, r.id)
		if err != nil {
			t.Fatal(err)
		}
		// Ray's log starts with the entrypoint it runs, script included:
		// look for the script's lines, whole.
		lines := strings.Split(log, "\n")
		finished := contains(lines, "finished cleanly")
		t.Logf("%s: %s %v after the stop request; the entrypoint finished its SIGTERM handler: %v (%s)", r.name, job.Status, took.Round(100*time.Millisecond), finished, job.Message)
		if job.Status != JobStopped || !contains(lines, "got SIGTERM") {
			t.Errorf("%s: %s, log %q: want STOPPED after a SIGTERM", r.name, job.Status, log)
		}
		if want := r.grace != ""; finished != want {
			t.Errorf("%s: finished cleanly %v, want %v", r.name, finished, want)
		}
	}
}

// TestRayErrors: Ray's own refusals come back as APIErrors with Ray's
// message and the endpoint.
func TestRayErrors(t *testing.T) {
	c := cluster(t)
	cl := client(t, c)
	ctx := within(t, 2*time.Minute)

	_, err := cl.Job(ctx, "sbtest-no-such-job")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "GET /api/jobs/sbtest-no-such-job: 404: Job sbtest-no-such-job does not exist") {
		t.Errorf("Job of a missing job: %v", err)
	}
	if _, err := cl.Logs(ctx, "sbtest-no-such-job"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Logs of a missing job: %v", err)
	}
	var cur LogCursor
	if err := cl.TailLogs(ctx, "sbtest-no-such-job", &cur, func(string) error { return nil }); !errors.Is(err, ErrNotFound) {
		t.Errorf("TailLogs of a missing job: %v", err)
	}

	id := submissionID(t)
	req := JobRequest{SubmissionID: id, Entrypoint: pyCommand("import time; time.sleep(60)"), EntrypointNumCPUs: 1}
	if _, err := cl.Submit(ctx, req); err != nil {
		t.Fatal(err)
	}
	// Ray refuses the same id twice (the head relays its agent's 400 as
	// a 500): a retried submission never runs twice.
	_, err = cl.Submit(ctx, req)
	var api *APIError
	if !errors.Is(err, ErrAlreadyExists) || !errors.As(err, &api) || !strings.Contains(api.Message, "ValueError: Job with submission_id "+id+" already exists") {
		t.Errorf("a second submission with the same id: %v", err)
	}
	_, err = cl.Delete(ctx, id)
	if !errors.As(err, &api) || !strings.Contains(api.Message, "non-terminal state") || !strings.Contains(err.Error(), "DELETE /api/jobs/"+id) {
		t.Errorf("Delete of a running job: %v", err)
	}
	jobs, err := cl.Jobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, j := range jobs {
		found = found || j.SubmissionID == id && j.Type == "SUBMISSION"
	}
	if !found {
		t.Errorf("Jobs does not list %s", id)
	}
	if stopped, err := cl.Stop(ctx, id); err != nil || !stopped {
		t.Fatalf("Stop: %v, %v", stopped, err)
	}
	job, err := cl.Wait(ctx, id, 100*time.Millisecond)
	if err != nil || job.Status != JobStopped {
		t.Fatalf("after Stop: %+v, %v", job, err)
	}
	// Stopping it again is no error. Whether Ray answers "stopped" depends
	// on whether the job's supervisor actor is gone yet: Ray writes the
	// STOPPED status before the actor exits, so the answer is not asserted.
	if _, err := cl.Stop(ctx, id); err != nil {
		t.Errorf("Stop of a stopped job: %v", err)
	}
	if deleted, err := cl.Delete(ctx, id); err != nil || !deleted {
		t.Fatalf("Delete of a stopped job: %v, %v", deleted, err)
	}
	// Ray answers the delete before every part of its record is gone (seen
	// under load: the job was still found right after), and its job
	// manager, which watches the job's supervisor actor until it reads a
	// terminal status, reads none once the record is deleted and, when the
	// actor has exited by then, writes the job FAILED, which brings the
	// record back (seen in CI: still there 10 s later): delete again until
	// it is gone.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		job, err := cl.Job(ctx, id)
		if errors.Is(err, ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("Job 20 s after Delete: %+v, %v", job, err)
			break
		}
		if err == nil && job.Status.Terminal() {
			if _, err := cl.Delete(ctx, id); err != nil {
				t.Errorf("Delete of the job's record that came back: %v", err)
			}
		}
	}
}

// TestFailedJobMessage: a job whose entrypoint fails is FAILED with Ray's
// message, which quotes the end of its log.
func TestFailedJobMessage(t *testing.T) {
	c := cluster(t)
	cl := client(t, c)
	ctx := within(t, time.Minute)
	id, err := cl.Submit(ctx, JobRequest{SubmissionID: submissionID(t), Entrypoint: "echo about to fail; exit 3", EntrypointNumCPUs: 1})
	if err != nil {
		t.Fatal(err)
	}
	job, err := cl.Wait(ctx, id, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if job.Status != JobFailed || job.DriverExitCode == nil || *job.DriverExitCode != 3 || !strings.Contains(job.Message, "exit code 3") || !strings.Contains(job.Message, "about to fail") {
		t.Fatalf("job %+v", job)
	}
}

// TestPackageSizeLimit measures the limit of an upload: Ray's dashboard
// takes a body of exactly MaxPackageBytes and refuses one byte more (413),
// and UploadPackage refuses such a package before sending anything. A
// package just under the limit, of data that does not compress, then
// works as a job's working directory on node2.
func TestPackageSizeLimit(t *testing.T) {
	c := cluster(t)
	cl := client(t, c)
	ctx := within(t, 5*time.Minute)

	put := func(name string, size int64) (int, error) {
		r := newRequest(http.MethodPut, "/api/packages/gcs/"+name)
		r.body, r.length = io.LimitReader(rand.Reader, size), size
		resp, err := cl.do(ctx, r)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	began := time.Now()
	if status, err := put("_sbtest_limit_exact.zip", MaxPackageBytes); err != nil || status != http.StatusOK {
		t.Fatalf("PUT of exactly %d bytes: %d, %v", MaxPackageBytes, status, err)
	}
	t.Logf("PUT of %s accepted in %v", mib(MaxPackageBytes), time.Since(began).Round(time.Millisecond))
	if status, err := put("_sbtest_limit_over.zip", MaxPackageBytes+1); err != nil || status != http.StatusRequestEntityTooLarge {
		t.Fatalf("PUT of %d bytes: %d, %v; want 413", MaxPackageBytes+1, status, err)
	}
	var tl *TooLargeError
	if err := cl.UploadPackage(ctx, "gcs://_sbtest_limit_client.zip", strings.NewReader(""), MaxPackageBytes+1); !errors.As(err, &tl) {
		t.Fatalf("UploadPackage over the limit: %v, want a TooLargeError", err)
	}

	// A package just under the limit: the binary, and random data filling
	// the rest (stored as is by deflate, so the zip is as large).
	data := filepath.Join(t.TempDir(), "noise.bin")
	f, err := os.Create(data)
	if err != nil {
		t.Fatal(err)
	}
	binSize, err := fileSize(selfBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(f, rand.Reader, MaxPackageBytes-binSize-(1<<20)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	began = time.Now()
	pkg, err := BuildPackage(ctx, PackageSpec{Binary: selfBinary(t), Strategy: filepath.Join(testenv.Root(t), "python", "example"), Data: []string{data}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	built := time.Since(began)
	began = time.Now()
	if _, err := cl.EnsurePackage(ctx, pkg); err != nil {
		t.Fatal(err)
	}
	uploaded := time.Since(began)
	began = time.Now()
	rep, _, log := runHelperJob(t, ctx, cl, pkg, JobRequest{
		SubmissionID: submissionID(t), EntrypointNumCPUs: 1,
		EntrypointResources: map[string]float64{"node2": 1},
	})
	if rep.Files != len(pkg.Manifest.Files) {
		t.Fatalf("helper report %+v; log:\n%s", rep, log)
	}
	t.Logf("package of %.1f MiB: built in %v, uploaded in %v, unpacked and checked on node2 by a job that took %v",
		float64(pkg.Size)/(1<<20), built.Round(time.Millisecond), uploaded.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
}

func contains(lines []string, line string) bool {
	for _, l := range lines {
		if l == line {
			return true
		}
	}
	return false
}

func fileSize(p string) (int64, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
