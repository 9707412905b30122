package e2e

// End-to-end tests of the stratbench binary: --ci with the real default
// limits, exit codes, the printed report, the job folder, the job commands,
// signals, and recovery after stratbench itself is killed.

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"stratbench/contract"
	"stratbench/internal/atomicfile"
	"stratbench/internal/e2etest"
	"stratbench/job"
)

// TestFailureModes runs every failure-mode strategy through the binary with
// the real limits (in parallel: the on_finish timeout alone takes a minute).
func TestFailureModes(t *testing.T) {
	cases := []struct {
		file string
		kind contract.FailureKind
		hook contract.Hook
		pids int // processes the strategy records
	}{
		{"infinite_loop.py", contract.KindTimeout, contract.HookOnData, 0},
		{"memory_grandchild.py", contract.KindMemory, contract.HookOnData, 2},
		{"process_spawner.py", contract.KindProcesses, contract.HookOnData, 31}, // the 32nd pid may go unrecorded
		{"setsid_escape.py", contract.KindMemory, contract.HookOnData, 1},
		{"exception_helper.py", contract.KindException, contract.HookOnData, 0},
		{"syntax_error.py", contract.KindException, contract.HookStartup, 0},
		{"no_on_data.py", contract.KindException, contract.HookStartup, 0},
		{"os_exit.py", contract.KindCrash, contract.HookOnData, 0},
		{"finish_loop.py", contract.KindTimeout, contract.HookOnFinish, 0},
		{"finish_huge.py", contract.KindProtocol, contract.HookOnFinish, 0},
		{"fd_garbage.py", contract.KindProtocol, contract.HookOnData, 0},
		{"ignore_sigterm.py", contract.KindTimeout, contract.HookOnData, 2},
		{"rejection_chain.py", contract.KindTimeout, contract.HookOnExecution, 0},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := e.Run("--ci", "--output", "json", e2etest.Strategy(tc.file))
			if r.Code != 1 {
				t.Fatalf("exit %d, want 1\nstderr: %s", r.Code, r.Stderr)
			}
			rep := e2etest.DecodeReport(t, r.Stdout)
			if rep.Status != job.StatusFailed || rep.Failure == nil || rep.Failure.Kind != tc.kind || rep.Failure.Hook != tc.hook {
				t.Fatalf("status %s failure %+v, want %s in %s", rep.Status, rep.Failure, tc.kind, tc.hook)
			}
			saved := e.Run("status", "--output", "json", rep.JobID)
			if saved.Code != 0 || e2etest.DecodeReport(t, saved.Stdout).Failure.Kind != tc.kind {
				t.Fatalf("saved job: exit %d %s", saved.Code, saved.Stdout)
			}
			pids := e.Pids(rep.JobID)
			if len(pids) < tc.pids {
				t.Fatalf("%d pids recorded, want %d", len(pids), tc.pids)
			}
			e.assertNoLeftovers(pids, rep.Resources.TreeTracking)
		})
	}
}

// TestCIReportToAGoneReader: the report is a --ci run's last words; a
// reader gone before them (`stratbench --ci … | true`) makes it exit as
// SIGPIPE would (141), quietly, the job run and saved all the same.
func TestCIReportToAGoneReader(t *testing.T) {
	e := newEnv(t)
	gone := e.runOutputGone("--ci", "--output", "json", e2etest.Strategy("ok_counter.py"), "--param", "every=5000")
	if gone.Code != 141 || gone.Stderr != "" {
		t.Fatalf("the report to a gone reader: exit %d, want 141\n%s", gone.Code, gone.Stderr)
	}
	reports, err := job.ReadStore(e.Home).List()
	if err != nil || len(reports) != 1 || reports[0].Status != job.StatusPassed {
		t.Fatalf("the job: %v, %d reports, want one, passed", err, len(reports))
	}
	e.assertNoLeftovers(nil, "pidns")
}

func TestTextReportAndJobCommands(t *testing.T) {
	e := newEnv(t)
	r := e.Run("--ci", e2etest.Strategy("ok_counter.py"), "--param", "every=5000")
	if r.Code != 0 || !strings.Contains(r.Stdout, "PASSED") || !strings.Contains(r.Stdout, "on_data          20,160") {
		t.Fatalf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if r.Stderr != "" {
		t.Fatalf("stderr is not a terminal, yet: %q", r.Stderr)
	}
	failed := e.Run("--ci", e2etest.Strategy("exception_helper.py"))
	if failed.Code != 1 || !strings.Contains(failed.Stdout, "exception in on_data, event #4 at") || !strings.Contains(failed.Stdout, "ZeroDivisionError") {
		t.Fatalf("exit %d\n%s", failed.Code, failed.Stdout)
	}

	jobs := e.Run("jobs")
	lines := strings.Split(strings.TrimSpace(jobs.Stdout), "\n")
	if jobs.Code != 0 || len(lines) != 3 || !strings.Contains(lines[1], "failed") || !strings.Contains(lines[1], "exception in on_data") || !strings.Contains(lines[2], "passed") {
		t.Fatalf("jobs:\n%s", jobs.Stdout)
	}
	var list []*job.Report
	if err := json.Unmarshal([]byte(e.Run("jobs", "--output", "json").Stdout), &list); err != nil || len(list) != 2 {
		t.Fatalf("jobs --output json: %v, %d jobs", err, len(list))
	}
	passedID, failedID := list[1].JobID, list[0].JobID

	logs := e.Run("logs", passedID)
	if logs.Code != 0 || strings.Count(logs.Stdout, "\n") != 4 || !strings.Contains(logs.Stdout, "stdout bar 5000 SYNB") {
		t.Fatalf("logs:\n%s", logs.Stdout)
	}
	jl := e.Run("logs", "--output", "jsonl", passedID)
	var first job.LogLine
	if err := json.Unmarshal([]byte(strings.SplitN(jl.Stdout, "\n", 2)[0]), &first); err != nil || first.Stream != "stdout" {
		t.Fatalf("logs --output jsonl: %v %+v", err, first)
	}
	diff := e.Run("status", passedID, "--diff", failedID)
	if diff.Code != 0 || !strings.Contains(diff.Stdout, "≠ status") || !strings.Contains(diff.Stdout, "≠ strategy sha256") {
		t.Fatalf("diff:\n%s", diff.Stdout)
	}
	for _, args := range [][]string{{"status", "nope"}, {"logs", "nope"}, {"status", passedID, "--diff", "nope"}} {
		r := e.Run(args...)
		// status takes a job or a sweep id: "unknown job or sweep".
		if r.Code != 2 || !strings.Contains(r.Stderr, `unknown job`) || !strings.Contains(r.Stderr, `"nope"`) {
			t.Fatalf("%v: exit %d, stderr %q", args, r.Code, r.Stderr)
		}
	}

	// Short job ids, wherever a job id is taken: latest, the 4-character
	// suffix, a unique prefix; an ambiguous one lists the candidates.
	suffix := passedID[len(passedID)-4:]
	for _, args := range [][]string{{"status", "latest"}, {"status", suffix, "--diff", "latest"}, {"logs", suffix}, {"status", failedID[:len(failedID)-2]}} {
		r := e.Run(args...)
		if r.Code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, r.Code, r.Stderr)
		}
	}
	if latest := e.Run("status", "latest", "--output", "json"); e2etest.DecodeReport(t, latest.Stdout).JobID != failedID {
		t.Fatalf("status latest is not the newest job:\n%s", latest.Stdout)
	}
	common := passedID[:len("20261201-")]
	if r := e.Run("status", common); r.Code != 2 || !strings.Contains(r.Stderr, "is ambiguous: it fits 2 jobs") ||
		!strings.Contains(r.Stderr, passedID) || !strings.Contains(r.Stderr, failedID) {
		t.Fatalf("status %s: exit %d, stderr %q", common, r.Code, r.Stderr)
	}
	// jobs filters and limits.
	if r := e.Run("jobs", "--status", "failed"); strings.Count(r.Stdout, "\n") != 2 || !strings.Contains(r.Stdout, failedID) {
		t.Fatalf("jobs --status failed:\n%s", r.Stdout)
	}
	if r := e.Run("jobs", "--limit", "1"); !strings.Contains(r.Stdout, failedID) || strings.Contains(r.Stdout, passedID) ||
		!strings.Contains(r.Stdout, "… 1 older job not shown") {
		t.Fatalf("jobs --limit 1:\n%s", r.Stdout)
	}
	if r := e.Run("jobs", "--strategy", "ok_counter", "--output", "json"); !strings.Contains(r.Stdout, passedID) || strings.Contains(r.Stdout, failedID) {
		t.Fatalf("jobs --strategy ok_counter:\n%s", r.Stdout)
	}
}

func TestDeterministicRuns(t *testing.T) {
	e := newEnv(t)
	a := e2etest.DecodeReport(t, e.Run("--ci", "--output", "json", "python/example/strategy.py").Stdout)
	b := e2etest.DecodeReport(t, e.Run("--ci", "--output", "json", "python/example/strategy.py").Stdout)
	if a.Fingerprint != b.Fingerprint || a.OrdersHash != b.OrdersHash || !reflect.DeepEqual(a.Metrics, b.Metrics) {
		t.Fatalf("two runs differ:\n%+v\n%+v", a.Metrics, b.Metrics)
	}
	c := e2etest.DecodeReport(t, e.Run("--ci", "--output", "json", "python/example/strategy.py", "--param", "fast=5").Stdout)
	if c.Fingerprint == a.Fingerprint || c.OrdersHash == a.OrdersHash {
		t.Fatal("different params, same fingerprint and orders")
	}
	diff := e.Run("status", a.JobID, "--diff", b.JobID)
	if !strings.Contains(diff.Stdout, "same inputs, same orders and fills") {
		t.Fatalf("diff:\n%s", diff.Stdout)
	}
}

// TestSignalsStopTheRun: SIGTERM and SIGINT are stop requests: on_finish
// runs, the job is saved as stopped and the exit code is 143 or 130.
func TestSignalsStopTheRun(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGTERM, 143}, {syscall.SIGINT, 130}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			cmd := e.Command("--ci", "--output", "json", e2etest.Strategy("slow_finish.py"))
			var out bytes.Buffer
			cmd.Stdout = &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitForLog(t, e.Home, "first bar", 20*time.Second) // the run is under way
			cmd.Process.Signal(tc.sig)
			err := cmd.Wait()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != tc.code {
				t.Fatalf("exit %v, want %d", err, tc.code)
			}
			rep := e2etest.DecodeReport(t, out.String())
			var meta struct{ Finished bool }
			json.Unmarshal(rep.Metadata, &meta)
			if rep.Status != job.StatusStopped || !meta.Finished {
				t.Fatalf("status %s metadata %s", rep.Status, rep.Metadata)
			}
			if n := rep.Hooks[contract.HookOnFinish].Count; n != 1 {
				t.Fatalf("on_finish ran %d times", n)
			}
			e.assertNoLeftovers(nil, rep.Resources.TreeTracking)
		})
	}
}

// waitForRecorded waits until the supervisor's state file at path records
// every one of pids.
func waitForRecorded(t *testing.T, path string, pids []int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var state struct {
			Procs []struct{ PID int } `json:"procs"`
		}
		data, err := os.ReadFile(path)
		recorded := map[int]bool{}
		if err == nil && json.Unmarshal(data, &state) == nil {
			for _, p := range state.Procs {
				recorded[p.PID] = true
			}
		}
		missing := 0
		for _, pid := range pids {
			if !recorded[pid] {
				missing++
			}
		}
		if missing == 0 && len(pids) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not record the pids %v after %s:\n%s", path, pids, timeout, data)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lockedBuffer is a bytes.Buffer a command writes to while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLogFloodKeepsMemoryBounded: 100 MiB printed, 64 MiB kept, one notice,
// and stratbench's own peak RSS stays under 200 MiB.
func TestLogFloodKeepsMemoryBounded(t *testing.T) {
	e := newEnv(t)
	r, peak := e.runWithPeakRSS("--ci", "--output", "json", e2etest.Strategy("log_flood.py"))
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	rep := e2etest.DecodeReport(t, r.Stdout)
	if rep.Status != job.StatusPassed || !rep.Logs.Truncated || rep.Logs.Bytes != 64<<20 {
		t.Fatalf("status %s logs %+v", rep.Status, rep.Logs)
	}
	notices := strings.Count(e.Run("logs", "--output", "jsonl", rep.JobID).Stdout, `"stream":"system"`)
	if notices != 1 {
		t.Fatalf("%d truncation notices", notices)
	}
	t.Logf("stratbench peak RSS during a 100 MiB flood: %.1f MiB", float64(peak)/(1<<20))
	if peak == 0 || peak > 200<<20 {
		t.Fatalf("stratbench peak RSS %d bytes", peak)
	}
}

// TestKilledStratbenchIsCleanedUp: after stratbench is SIGKILLed mid-run,
// the next stratbench command kills the leftovers of its tree (a setsid'd
// grandchild survives a parent-death signal) and marks the job failed. With
// the fallback tree tracking: in a PID namespace the tree dies with
// stratbench (see the supervisor's tests).
func TestKilledStratbenchIsCleanedUp(t *testing.T) {
	e := newEnv(t)
	cmd := e.Command("--ci", e2etest.Strategy("orphan_sleeper.py"))
	cmd.Env = append(cmd.Env, "STRATBENCH_TREE_TRACKING=fallback")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var id string
	deadline := time.Now().Add(20 * time.Second)
	for id == "" && time.Now().Before(deadline) {
		matches, _ := filepath.Glob(filepath.Join(e.Home, "jobs", "*", "artifacts", "pids.txt"))
		if len(matches) == 1 {
			id = filepath.Base(filepath.Dir(filepath.Dir(matches[0])))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if id == "" {
		t.Fatal("the strategy never recorded its sleeper")
	}
	// Once the supervisor's state file records the sleeper, the next
	// stratbench can find it.
	waitForRecorded(t, filepath.Join(e.Home, "jobs", id, "procs.json"), e.Pids(id), 20*time.Second)
	cmd.Process.Kill()
	cmd.Wait()
	pids := e.Pids(id)
	if len(pids) != 1 || syscall.Kill(pids[0], 0) != nil {
		t.Fatalf("sleeper %v should have survived the kill of stratbench", pids)
	}
	jobs := e.Run("jobs")
	if !strings.Contains(jobs.Stdout, "crash in") {
		t.Fatalf("jobs after recovery:\n%s", jobs.Stdout)
	}
	e.assertNoLeftovers(pids, "fallback")
}

// TestKilledRunKeepsItsParams: the report of a run in flight carries the
// params it runs with (the MANIFEST's defaults with --param), and so does
// the report a run whose stratbench was killed with SIGKILL is recovered
// as (failed, a crash): `status` shows them.
func TestKilledRunKeepsItsParams(t *testing.T) {
	e := newEnv(t)
	cmd := e.Command("--ci", e2etest.SweepStrategy, "--param", "fast=3", "--param", "slow_ms=5")
	e.Launch(cmd)
	want := map[string]any{"fast": 3.0, "slow": 20.0, "fail_at": -1.0, "slow_ms": 5.0}
	id := e.waitForRunSaying(60*time.Second, "first bar", nil)
	data, err := os.ReadFile(filepath.Join(e.Home, "jobs", id, "job.json"))
	if err != nil {
		t.Fatal(err)
	}
	running := e2etest.DecodeReport(t, string(data))
	if running.Status != job.StatusRunning || !reflect.DeepEqual(running.Strategy.Params, want) {
		t.Fatalf("job.json of the run in flight: status %s params %v, want running with %v", running.Status, running.Strategy.Params, want)
	}
	cmd.Process.Kill()
	cmd.Wait()
	killedAt := time.Now()
	// What a kill in the middle of an atomic write of job.json leaves.
	leftover := filepath.Join(e.Home, "jobs", id, strings.Replace(atomicfile.TempPattern("job.json"), "*", "2718281828", 1))
	if err := os.WriteFile(leftover, []byte(`{"status": "run`), 0o644); err != nil {
		t.Fatal(err)
	}
	st := e.Run("status", id, "--output", "json")
	rep := e2etest.DecodeReport(t, st.Stdout)
	if rep.Status != job.StatusFailed || rep.Failure == nil || rep.Failure.Kind != contract.KindCrash ||
		!strings.Contains(rep.Failure.Message, "it was killed") {
		t.Fatalf("status of the killed run: %s %+v, want failed with a crash\n%s", rep.Status, rep.Failure, st.Stderr)
	}
	// It ended when stratbench died, not when a later command found it.
	if rep.FinishedAt == nil || rep.FinishedAt.After(killedAt) || rep.FinishedAt.Before(rep.StartedAt) ||
		rep.DurationMS != rep.FinishedAt.Sub(rep.StartedAt).Milliseconds() {
		t.Errorf("the killed run finished at %v (duration %d ms), want between its start %v and the kill %v",
			rep.FinishedAt, rep.DurationMS, rep.StartedAt, killedAt)
	}
	if _, err := os.Stat(leftover); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the cut write's temporary file is still there: %v", err)
	}
	if !reflect.DeepEqual(rep.Strategy.Params, want) {
		t.Fatalf("the killed run was recovered with params %v, want %v", rep.Strategy.Params, want)
	}
	if text := e.Run("status", id).Stdout; !strings.Contains(text, "fail_at=-1 fast=3 slow=20 slow_ms=5") {
		t.Fatalf("status does not show the killed run's params:\n%s", text)
	}
	e.assertNoLeftovers(nil, "pidns")
}

// TestSandboxRefusesWhatItPromises runs the same probe strategy with and
// without --sandbox: every forbidden action fails inside and works outside,
// so the test can fail. The secret is in stratbench's own environment, where
// a worker would find it through /proc/PPID/environ.
func TestSandboxRefusesWhatItPromises(t *testing.T) {
	e := newEnv(t)
	home, _ := os.UserHomeDir()
	probe := func(extra ...string) map[string]string {
		args := append([]string{"--ci", "--output", "json", e2etest.Strategy("sandbox_probe.py"), "--param", "home=" + home}, extra...)
		cmd := e.Command(args...)
		cmd.Env = append(cmd.Env, "STRATBENCH_TEST_SECRET=hunter2")
		if len(extra) == 0 {
			// Outside the sandbox, a PID namespace would hide stratbench
			// (and its secret) from the worker: the fallback shows that
			// the probe works where nothing forbids it.
			cmd.Env = append(cmd.Env, "STRATBENCH_TREE_TRACKING=fallback")
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v", extra, err)
		}
		rep := e2etest.DecodeReport(t, string(out))
		if rep.Python.Sandbox != (len(extra) > 0) {
			t.Fatalf("%v: report sandbox %v", extra, rep.Python.Sandbox)
		}
		var got map[string]string
		if err := json.Unmarshal(rep.Metadata, &got); err != nil {
			t.Fatal(err)
		}
		if data, err := os.ReadFile(filepath.Join(e.Home, "jobs", rep.JobID, "artifacts", "probe.txt")); err != nil || len(data) == 0 {
			t.Fatalf("%v: artifact not written: %v", extra, err)
		}
		return got
	}
	inside, outside := probe("--sandbox"), probe()
	for _, name := range []string{"tcp", "udp", "unix", "read_etc", "read_home", "write_next_to_strategy", "fork",
		"subprocess", "thread", "parent_secret", "allocate_700mib", "exec_loader", "exec_memfd", "execveat_empty_path",
		"posix_spawn", "memfd_create"} {
		if outside[name] != "ok" {
			t.Errorf("%s fails even without the sandbox (%s): the check proves nothing", name, outside[name])
		}
		if inside[name] == "ok" || inside[name] == "" {
			t.Errorf("%s succeeded inside the sandbox", name)
		}
		t.Logf("%-24s refused: %s", name, inside[name])
	}
	for _, name := range []string{"write_artifact", "read_own_folder"} {
		if inside[name] != "ok" || outside[name] != "ok" {
			t.Errorf("%s: inside %q, outside %q; want ok in both", name, inside[name], outside[name])
		}
	}
}

// TestPrecheck: a precheck passes once per strategy, params and window,
// and fails as a run would (the windows it refuses:
// testdata/script/precheck_refusals.txtar).
func TestPrecheck(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "strategy.py")
	src, _ := os.ReadFile(e2etest.Strategy("ok_counter.py"))
	os.WriteFile(script, src, 0o644)
	from, to := "2026-01-05 00:00:00", "2026-01-05 07:59:00" // 960 events of the sample
	precheck := func(extra ...string) e2etest.Result {
		return e.Run(append([]string{"precheck", script, "--from", from, "--to", to, "--output", "json"}, extra...)...)
	}
	status := func(r e2etest.Result) string {
		var res struct{ Status string }
		if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
			t.Fatalf("precheck output: %v\n%s\n%s", err, r.Stdout, r.Stderr)
		}
		return res.Status
	}
	if r := precheck(); r.Code != 0 || status(r) != "passed" {
		t.Fatalf("first precheck: exit %d %s", r.Code, r.Stdout)
	}
	if r := precheck(); r.Code != 0 || status(r) != "already_checked" {
		t.Fatalf("second precheck: exit %d %s", r.Code, r.Stdout)
	}
	if r := precheck("--param", "every=10"); status(r) != "passed" {
		t.Fatalf("new params: %s", r.Stdout)
	}
	if r := e.Run("precheck", script, "--from", from, "--to", to, "--param", "every=10"); !strings.HasPrefix(r.Stdout, "already checked") {
		t.Fatalf("text output: %s", r.Stdout)
	}
	os.WriteFile(script, append(src, []byte("\n# edited\n")...), 0o644)
	if r := precheck(); status(r) != "passed" {
		t.Fatalf("edited script: %s", r.Stdout)
	}
	records, _ := filepath.Glob(filepath.Join(e.Home, "prechecks", "*.json"))
	if len(records) != 3 {
		t.Fatalf("%d precheck records, want 3", len(records))
	}

	failing := e.Run("precheck", e2etest.Strategy("exception_helper.py"), "--from", from, "--to", to)
	if failing.Code != 1 || !strings.Contains(failing.Stdout, "precheck failed") {
		t.Fatalf("failing precheck: exit %d %s", failing.Code, failing.Stdout)
	}
}

// TestRejectionsReachOnExecution: orders the market refuses come back to
// on_execution with a reason; nothing crashes.
func TestRejectionsReachOnExecution(t *testing.T) {
	e := newEnv(t)
	r := e.Run("--ci", "--output", "json", e2etest.Strategy("bad_orders.py"))
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stdout)
	}
	rep := e2etest.DecodeReport(t, r.Stdout)
	var meta struct{ Seen []json.RawMessage }
	json.Unmarshal(rep.Metadata, &meta)
	if len(meta.Seen) != 5 {
		t.Fatalf("on_execution saw %d executions: %s", len(meta.Seen)-1, rep.Metadata)
	}
	for _, ex := range meta.Seen[1:] {
		var fields []any
		json.Unmarshal(ex, &fields)
		if fields[2] != "rejected" || fields[3] == "" {
			t.Errorf("execution %s: want rejected with a reason", ex)
		}
	}
}

// TestAgreesWithFloor: the fills and final equity of an SMA crossover run
// through the real worker equal those of bench/floor.py, an independent
// in-process re-implementation of the fill model, to 1e-9 relative; for one
// and two symbols, with and without fees.
func TestAgreesWithFloor(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		symbols string
		flags   []string
	}{
		{"one symbol", "1", nil},
		{"one symbol, fees and slippage", "1", []string{"--fee-bps", "5", "--slippage-bps", "2"}},
		{"two symbols", "2", nil},
		{"two symbols, fees", "2", []string{"--fee-bps", "10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			data := filepath.Join(dir, "bars"+tc.symbols+".csv")
			if _, err := os.Stat(data); err != nil {
				if out, err := exec.Command(py, "bench/gen_bars.py", "20000", data, "--symbols", tc.symbols).CombinedOutput(); err != nil {
					t.Fatalf("gen_bars: %v %s", err, out)
				}
			}
			strat := filepath.Join("backtest", "testdata", "sma_cross.py")
			floorOut, err := exec.Command(py, append([]string{"bench/floor.py", strat, data, "--json", "--executions"}, tc.flags...)...).Output()
			if err != nil {
				t.Fatalf("floor: %v", err)
			}
			var floor struct {
				Fills       int     `json:"fills"`
				FinalEquity float64 `json:"final_equity"`
				Executions  []struct {
					OrderID  int64   `json:"order_id"`
					Symbol   string  `json:"symbol"`
					Side     string  `json:"side"`
					Qty      float64 `json:"qty"`
					Price    float64 `json:"price"`
					Fee      float64 `json:"fee"`
					Status   string  `json:"status"`
					Cash     float64 `json:"cash"`
					Position float64 `json:"position"`
				} `json:"executions"`
			}
			if err := json.Unmarshal(floorOut, &floor); err != nil {
				t.Fatal(err)
			}
			r := e.Run(append([]string{"--ci", "--output", "json", "--data", data, strat}, tc.flags...)...)
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Stderr)
			}
			rep := e2etest.DecodeReport(t, r.Stdout)
			m := rep.Metrics
			if m == nil {
				t.Fatal("the report has no metrics")
			}
			if m.Fills != floor.Fills || m.Fills == 0 || !agree(m.FinalEquity, floor.FinalEquity) {
				t.Fatalf("stratbench: %d fills, final equity %v; floor: %d fills, %v", m.Fills, m.FinalEquity, floor.Fills, floor.FinalEquity)
			}
			f := e.openRecord(rep.JobID, job.RecordOrders)
			defer f.Close()
			rows, err := csv.NewReader(f).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			col := map[string]int{}
			for i, h := range rows[0] {
				col[h] = i
			}
			num := func(row []string, name string) float64 {
				v, _ := strconv.ParseFloat(row[col[name]], 64)
				return v
			}
			k := 0
			for _, row := range rows[1:] {
				if row[col["record"]] != "execution" {
					continue
				}
				if k >= len(floor.Executions) {
					t.Fatalf("more executions than the floor's %d", len(floor.Executions))
				}
				want := floor.Executions[k]
				got := fmt.Sprintf("%s %s %s %s", row[col["order_id"]], row[col["symbol"]], row[col["side"]], row[col["status"]])
				if exp := fmt.Sprintf("%d %s %s %s", want.OrderID, want.Symbol, want.Side, want.Status); got != exp ||
					!agree(num(row, "qty"), want.Qty) || !agree(num(row, "price"), want.Price) || !agree(num(row, "fee"), want.Fee) ||
					!agree(num(row, "cash"), want.Cash) || !agree(num(row, "position"), want.Position) {
					t.Fatalf("execution %d differs:\nstratbench %v\nfloor      %+v", k, row, want)
				}
				k++
			}
			if k != len(floor.Executions) {
				t.Fatalf("%d executions, floor %d", k, len(floor.Executions))
			}
		})
	}
}

// TestCIWatch: --ci --watch prints one JSON line per save, headless, and
// exits 143 on SIGTERM.
func TestCIWatch(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "strategy.py")
	version := func(n int) []byte {
		return []byte(fmt.Sprintf("MANIFEST = {\"name\": \"v%d\"}\n\ndef on_data(ctx, history):\n    pass\n", n))
	}
	os.WriteFile(script, version(1), 0o644)
	cmd := e.Command("--ci", "--watch", "--output", "json", script)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next := func() *job.Report {
		t.Helper()
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("stdout closed")
			}
			return e2etest.DecodeReport(t, line)
		case <-time.After(30 * time.Second):
			t.Fatal("no report")
		}
		return nil
	}
	first := next()
	// An atomic-rename save, as editors do it.
	tmp := script + ".tmp"
	os.WriteFile(tmp, version(2), 0o644)
	os.Rename(tmp, script)
	second := next()
	if first.Status != job.StatusPassed || second.Status != job.StatusPassed || first.Strategy.SHA256 == second.Strategy.SHA256 {
		t.Fatalf("reports: %s %s, %s %s", first.Status, first.Strategy.SHA256, second.Status, second.Strategy.SHA256)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 143 {
		t.Fatalf("exit %v, want 143", err)
	}
}

// TestLogsFollowStopped: logs --follow streams a running job's log and ends
// when the job ends; the job, stopped by SIGTERM, is listed as stopped.
func TestLogsFollowStopped(t *testing.T) {
	e := newEnv(t)
	run := e.Command("--ci", e2etest.Strategy("slow_finish.py"))
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	id := waitForLog(t, e.Home, "first bar", 20*time.Second)
	follow := e.Command("logs", "--follow", id)
	out := &lockedBuffer{}
	follow.Stdout = out
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	// The follower is following once it has printed what the log holds.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), "first bar"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("logs --follow printed nothing:\n%s", out.String())
		}
	}
	run.Process.Signal(syscall.SIGTERM)
	run.Wait()
	done := make(chan error, 1)
	go func() { done <- follow.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("logs --follow: %v", err)
		}
	case <-time.After(10 * time.Second):
		follow.Process.Kill()
		t.Fatal("logs --follow did not end with the job")
	}
	if !strings.Contains(out.String(), "stdout on_finish ran") {
		t.Fatalf("followed log:\n%s", out.String())
	}
	jobs := e.Run("jobs")
	if !strings.Contains(jobs.Stdout, id) || !strings.Contains(jobs.Stdout, "stopped") {
		t.Fatalf("jobs:\n%s", jobs.Stdout)
	}
}

// TestJobIDCompletion: shell completion offers job ids.
func TestJobIDCompletion(t *testing.T) {
	e := newEnv(t)
	rep := e2etest.DecodeReport(t, e.Run("--ci", "--output", "json", e2etest.Strategy("ok_counter.py")).Stdout)
	for _, args := range [][]string{{"__complete", "status", ""}, {"__complete", "logs", rep.JobID[:8]}} {
		r := e.Run(args...)
		if !strings.Contains(r.Stdout, rep.JobID) {
			t.Fatalf("%v: %q", args, r.Stdout)
		}
	}
}

// TestSecondSignalKills: a second SIGINT while on_finish runs kills the run
// at once; the job is saved as stopped and the exit code is 130. SIGHUP (the
// terminal closed) is a stop request too, with 129.
func TestSecondSignalKills(t *testing.T) {
	e := newEnv(t)
	cmd := e.Command("--ci", "--output", "json", e2etest.Strategy("slow_on_finish.py"))
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForLog(t, e.Home, "first bar", 20*time.Second)
	cmd.Process.Signal(syscall.SIGINT)
	waitForLog(t, e.Home, "on_finish started", 10*time.Second)
	start := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130", err)
	}
	if el := time.Since(start); el > 1500*time.Millisecond {
		t.Fatalf("the second signal took %s to end the run", el)
	}
	if rep := e2etest.DecodeReport(t, out.String()); rep.Status != job.StatusStopped {
		t.Fatalf("status %s", rep.Status)
	}

	e = newEnv(t) // a home of its own: the log waited for is this run's
	hup := e.Command("--ci", e2etest.Strategy("slow_finish.py"))
	if err := hup.Start(); err != nil {
		t.Fatal(err)
	}
	waitForLog(t, e.Home, "first bar", 20*time.Second)
	hup.Process.Signal(syscall.SIGHUP)
	if err := hup.Wait(); err == nil || err.(*exec.ExitError).ExitCode() != 129 {
		t.Fatalf("SIGHUP: exit %v, want 129", err)
	}
}

// TestCIWatchSignalWhileASaveStops: a signal that arrives while a save is
// stopping the run in flight lets that run finish its on_finish, prints its
// report, and ends the watch with the signal's exit code.
func TestCIWatchSignalWhileASaveStops(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "strategy.py")
	src, _ := os.ReadFile(e2etest.Strategy("slow_on_finish.py"))
	os.WriteFile(script, src, 0o644)
	cmd := e.Command("--ci", "--watch", "--output", "json", script)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForLog(t, e.Home, "first bar", 20*time.Second)
	os.WriteFile(script, append(src, []byte("\n# saved\n")...), 0o644)
	waitForLog(t, e.Home, "on_finish started", 10*time.Second)
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 143 {
		t.Fatalf("exit %v, want 143", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d reports, want the stopped run's only:\n%s", len(lines), out.String())
	}
	rep := e2etest.DecodeReport(t, lines[0])
	if rep.Status != job.StatusStopped || rep.Hooks[contract.HookOnFinish].Count != 1 {
		t.Fatalf("status %s, on_finish %+v", rep.Status, rep.Hooks[contract.HookOnFinish])
	}
}
