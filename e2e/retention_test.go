package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"stratbench/job"
)

// quickJob runs ok_counter.py over an hour of bars with env added, and
// returns the job's id.
func (e *env) quickJob(env ...string) string {
	e.t.Helper()
	cmd := e.command("--ci", strategy("ok_counter.py"), "--to", "2026-01-05 01:00:00", "--output", "json")
	cmd.Env = append(cmd.Env, env...)
	r := runCmd(e.t, cmd)
	if r.code != 0 {
		e.t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	return decodeReport(e.t, r.stdout).JobID
}

// fakeRunningJob makes a job folder whose report says running and that
// has no owner record: nothing tells that it ended, so nothing may remove
// it. It is older than every job the test runs.
func (e *env) fakeRunningJob() string {
	e.t.Helper()
	id := "20200101-000000.000-0run"
	dir := filepath.Join(e.home, "jobs", id)
	if err := os.MkdirAll(filepath.Join(dir, job.RecordsDir), 0o755); err != nil {
		e.t.Fatal(err)
	}
	rep, _ := json.Marshal(job.Report{JobID: id, Status: job.StatusRunning, StartedAt: time.Now().Add(-time.Hour)})
	if err := os.WriteFile(filepath.Join(dir, "job.json"), rep, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// TestRetentionBudget: with STRATBENCH_KEEP=2 each run leaves the two most
// recent jobs of their own, and never removes a running job, a job marked
// with `stratbench keep`, or the runs of a sweep still in the home (issue
// 37, item 4).
func TestRetentionBudget(t *testing.T) {
	e := newEnv(t)
	running := e.fakeRunningJob()
	kept := e.quickJob()
	if r := e.run("keep", kept); r.code != 0 || !strings.Contains(r.stdout, "kept "+kept) {
		t.Fatalf("keep: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	r := e.run("sweep", sweepStrategy, "--ci", "--output", "json", "--grid", "fast=3,4", "--to", "2026-01-05 02:00:00")
	if r.code != 0 {
		t.Fatalf("sweep: exit %d %s", r.code, r.stderr)
	}
	var runs []string
	for _, run := range decodeSweep(t, r.stdout).Runs {
		runs = append(runs, run.JobID)
	}
	var own []string
	for range 4 {
		own = append(own, e.quickJob("STRATBENCH_KEEP=2"))
	}
	want := append([]string{running, kept}, runs...)
	want = append(want, own[2:]...)
	slices.Sort(want)
	if got := e.jobIDs(); !slices.Equal(got, want) {
		t.Errorf("jobs left %v, want %v", got, want)
	}
	// Unmarked, the kept job goes at the next run; "all" keeps everything.
	if r := e.run("keep", "--undo", kept); r.code != 0 {
		t.Fatalf("keep --undo: exit %d %s", r.code, r.stderr)
	}
	if r := e.run("keep"); !strings.Contains(r.stdout, "no job is marked to keep") {
		t.Errorf("keep lists %q", r.stdout)
	}
	all := e.quickJob("STRATBENCH_KEEP=all")
	if got := e.jobIDs(); !slices.Contains(got, kept) || !slices.Contains(got, all) {
		t.Errorf("STRATBENCH_KEEP=all removed jobs: %v", got)
	}
	last := e.quickJob("STRATBENCH_KEEP=2")
	want = append([]string{running}, runs...)
	want = append(want, all, last)
	slices.Sort(want)
	if got := e.jobIDs(); !slices.Equal(got, want) {
		t.Errorf("jobs left %v, want %v", got, want)
	}
}

// TestPruneAsks: prune lists with --dry-run and removes nothing; without
// --yes it asks at a terminal ([y/N], no by default) and refuses without
// one (exit 2); --keep N keeps the N most recent; a job marked with keep
// stays (issue 37, item 4: prune removed everything without asking).
func TestPruneAsks(t *testing.T) {
	e := newEnv(t)
	var ids []string
	for range 3 {
		ids = append(ids, e.quickJob())
	}
	r := e.run("prune", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stdout, "would remove 0 sweeps and 3 jobs") || len(e.jobIDs()) != 3 {
		t.Fatalf("prune --dry-run: exit %d, %d jobs left\n%s%s", r.code, len(e.jobIDs()), r.stdout, r.stderr)
	}
	for _, id := range ids {
		if !strings.Contains(r.stdout, "job    "+id) {
			t.Errorf("prune --dry-run does not list %s:\n%s", id, r.stdout)
		}
	}
	r = e.run("prune")
	if r.code != 2 || !strings.Contains(r.stderr, "prune would remove 0 sweeps and 3 jobs") || !strings.Contains(r.stderr, "pass --yes") || len(e.jobIDs()) != 3 {
		t.Fatalf("prune without a terminal: exit %d, %d jobs left\n%s%s", r.code, len(e.jobIDs()), r.stdout, r.stderr)
	}
	prompt := func(answer string) result {
		t.Helper()
		terminal, typist := openPTY(t)
		if _, err := typist.WriteString(answer + "\n"); err != nil {
			t.Fatal(err)
		}
		cmd := e.command("prune")
		var out, errb bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = terminal, &out, &errb
		return result{e.exitCode(cmd.Run()), out.String(), errb.String()}
	}
	for _, no := range []string{"", "n", "no", "maybe"} {
		r = prompt(no)
		if r.code != 0 || !strings.Contains(r.stderr, "remove 0 sweeps and 3 jobs") || !strings.Contains(r.stderr, "[y/N]") ||
			!strings.Contains(r.stdout, "nothing removed") || len(e.jobIDs()) != 3 {
			t.Fatalf("prune answered %q: exit %d, %d jobs left\n%s%s", no, r.code, len(e.jobIDs()), r.stdout, r.stderr)
		}
	}
	if r := e.run("keep", ids[0]); r.code != 0 {
		t.Fatalf("keep: exit %d %s", r.code, r.stderr)
	}
	r = e.run("prune", "--keep", "1", "--yes")
	if r.code != 0 || !strings.Contains(r.stdout, "removed 0 sweeps and 1 job") || !strings.Contains(r.stdout, "kept 1 job marked") {
		t.Fatalf("prune --keep 1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got, want := e.jobIDs(), []string{ids[0], ids[2]}; !slices.Equal(got, want) {
		t.Fatalf("prune --keep 1 left %v, want %v (the kept and the newest)", got, want)
	}
	r = prompt("y")
	if r.code != 0 || !strings.Contains(r.stdout, "removed 0 sweeps and 1 job") {
		t.Fatalf("prune answered y: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := e.jobIDs(); !slices.Equal(got, []string{ids[0]}) {
		t.Fatalf("prune left %v, want only the kept %s", got, ids[0])
	}
}
