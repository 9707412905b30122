package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/job"
)

// quickJob runs ok_counter.py over an hour of bars with env added, and
// returns the job's id.
func (e *env) quickJob(env ...string) string {
	e.t.Helper()
	cmd := e.command("--ci", strategy("ok_counter.py"), "--to", "2026-01-05 01:00:00", "--output", "json")
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if code := e.exitCode(cmd.Run()); code != 0 {
		e.t.Fatalf("exit %d\n%s", code, errb.String())
	}
	return decodeReport(e.t, out.String()).JobID
}

// jobsLeft returns the ids of the job folders in the home, oldest first.
func (e *env) jobsLeft() []string {
	e.t.Helper()
	entries, err := os.ReadDir(filepath.Join(e.home, "jobs"))
	if err != nil {
		e.t.Fatal(err)
	}
	var ids []string
	for _, en := range entries {
		ids = append(ids, en.Name())
	}
	return ids
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
	if got := e.jobsLeft(); !slices.Equal(got, want) {
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
	if got := e.jobsLeft(); !slices.Contains(got, kept) || !slices.Contains(got, all) {
		t.Errorf("STRATBENCH_KEEP=all removed jobs: %v", got)
	}
	last := e.quickJob("STRATBENCH_KEEP=2")
	want = append([]string{running}, runs...)
	want = append(want, all, last)
	slices.Sort(want)
	if got := e.jobsLeft(); !slices.Equal(got, want) {
		t.Errorf("jobs left %v, want %v", got, want)
	}
}

// TestRetentionBadKeep: a STRATBENCH_KEEP that does not parse stops the
// run before it starts (exit 2, naming the variable and the syntax).
func TestRetentionBadKeep(t *testing.T) {
	e := newEnv(t)
	for _, bad := range []string{"0", "-3", "lots", "500,2", "2GiB,1GiB", "10 parsecs", "1KB"} {
		cmd := e.command("--ci", strategy("ok_counter.py"), "--to", "2026-01-05 01:00:00")
		cmd.Env = append(cmd.Env, "STRATBENCH_KEEP="+bad)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		code := e.exitCode(cmd.Run())
		if code != 2 || !strings.Contains(errb.String(), "STRATBENCH_KEEP=") || !strings.Contains(errb.String(), "500,2GiB") {
			t.Errorf("STRATBENCH_KEEP=%s: exit %d\n%s", bad, code, errb.String())
		}
	}
	if left := e.jobsLeft(); len(left) != 0 {
		t.Errorf("jobs made: %v", left)
	}
}

// openPTY opens a pseudo-terminal: its terminal side, and the side that
// types into it.
func openPTY(t *testing.T) (terminal, typist *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	terminal, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { terminal.Close() })
	return terminal, master
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
	if r.code != 0 || !strings.Contains(r.stdout, "would remove 0 sweeps and 3 jobs") || len(e.jobsLeft()) != 3 {
		t.Fatalf("prune --dry-run: exit %d, %d jobs left\n%s%s", r.code, len(e.jobsLeft()), r.stdout, r.stderr)
	}
	for _, id := range ids {
		if !strings.Contains(r.stdout, "job    "+id) {
			t.Errorf("prune --dry-run does not list %s:\n%s", id, r.stdout)
		}
	}
	r = e.run("prune")
	if r.code != 2 || !strings.Contains(r.stderr, "prune would remove 0 sweeps and 3 jobs") || !strings.Contains(r.stderr, "pass --yes") || len(e.jobsLeft()) != 3 {
		t.Fatalf("prune without a terminal: exit %d, %d jobs left\n%s%s", r.code, len(e.jobsLeft()), r.stdout, r.stderr)
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
			!strings.Contains(r.stdout, "nothing removed") || len(e.jobsLeft()) != 3 {
			t.Fatalf("prune answered %q: exit %d, %d jobs left\n%s%s", no, r.code, len(e.jobsLeft()), r.stdout, r.stderr)
		}
	}
	if r := e.run("keep", ids[0]); r.code != 0 {
		t.Fatalf("keep: exit %d %s", r.code, r.stderr)
	}
	r = e.run("prune", "--keep", "1", "--yes")
	if r.code != 0 || !strings.Contains(r.stdout, "removed 0 sweeps and 1 job") || !strings.Contains(r.stdout, "kept 1 job marked") {
		t.Fatalf("prune --keep 1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got, want := e.jobsLeft(), []string{ids[0], ids[2]}; !slices.Equal(got, want) {
		t.Fatalf("prune --keep 1 left %v, want %v (the kept and the newest)", got, want)
	}
	r = prompt("y")
	if r.code != 0 || !strings.Contains(r.stdout, "removed 0 sweeps and 1 job") {
		t.Fatalf("prune answered y: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := e.jobsLeft(); !slices.Equal(got, []string{ids[0]}) {
		t.Fatalf("prune left %v, want only the kept %s", got, ids[0])
	}
	if r := e.run("prune", "--keep", "-1"); r.code != 2 {
		t.Errorf("prune --keep -1: exit %d", r.code)
	}
}
