package main

// End-to-end tests of the stratbench binary: --ci with the real default
// limits, exit codes, the printed report, the job folder, the job commands,
// signals, and recovery after stratbench itself is killed.

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
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
	"stratbench/job"
)

var binary string

// launcherDir is the folder of the interpreter launcher
// TestSweepForksFromTheProbedInterpreter makes: the test binary, linked
// there as python3 and re-executed by that name, appends its arguments to
// the folder's "calls" file, one line a call, and executes the interpreter
// the folder's "target" file names, as a launcher that is a program and
// not a script does.
const launcherDir = "stratbench-test-launcher"

func TestMain(m *testing.M) {
	if dir := filepath.Dir(os.Args[0]); filepath.Base(dir) == launcherDir {
		target, err := os.ReadFile(filepath.Join(dir, "target"))
		if err == nil {
			err = appendLine(filepath.Join(dir, "calls"), strings.Join(os.Args[1:], " "))
		}
		if err == nil {
			err = syscall.Exec(string(target), append([]string{string(target)}, os.Args[1:]...), os.Environ())
		}
		fmt.Fprintln(os.Stderr, "launcher:", err)
		os.Exit(127)
	}
	flag.Parse()
	if testing.Short() {
		// The binary is built without the race detector: under -short (the
		// race run of CI) these tests would only repeat themselves.
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "stratbench-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "stratbench")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// appendLine appends line and a newline to the file at path, one write
// (O_APPEND: the lines of processes that call at once do not mix).
func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(line + "\n"))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// env is one isolated stratbench installation: its own STRATBENCH_HOME and
// a TMPDIR that every worker inherits, which marks the processes of its
// trees.
type env struct {
	t    *testing.T
	home string
	tmp  string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	if binary == "" {
		t.Skip("end-to-end tests of the binary do not run with -short")
	}
	return &env{t: t, home: t.TempDir(), tmp: t.TempDir()}
}

func (e *env) command(args ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "STRATBENCH_HOME="+e.home, "TMPDIR="+e.tmp, "NO_COLOR=1")
	return cmd
}

// launch starts cmd, and kills it when the test ends before it has been
// waited for: a test that fails midway leaves nothing running.
func (e *env) launch(cmd *exec.Cmd) {
	e.t.Helper()
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
}

type result struct {
	code           int
	stdout, stderr string
}

func (e *env) run(args ...string) result {
	e.t.Helper()
	cmd := e.command(args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	return result{e.exitCode(cmd.Run()), out.String(), errb.String()}
}

// exitCode is the exit code of a finished command whose Run or Wait
// returned err; any other error fails the test.
func (e *env) exitCode(err error) int {
	e.t.Helper()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return 0
}

// runOutputGone runs stratbench with a stdout whose reader has gone
// away before it starts (`stratbench … | true`): its first write to
// stdout fails with EPIPE.
func (e *env) runOutputGone(args ...string) result {
	e.t.Helper()
	cmd := e.command(args...)
	r, w, err := os.Pipe()
	if err != nil {
		e.t.Fatal(err)
	}
	r.Close()
	defer w.Close()
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &errb
	return result{code: e.exitCode(cmd.Run()), stderr: errb.String()}
}

func strategy(name string) string { return filepath.Join("testdata", "strategies", name) }

func decodeReport(t *testing.T, out string) *job.Report {
	t.Helper()
	var rep job.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out)
	}
	return &rep
}

// assertNoLeftovers checks, by pid and by the TMPDIR every worker inherits,
// that no process of the env's trees is alive. With the "pidns" tree
// tracking the pids a strategy records are its namespace's, not ours (and
// the kernel ended the namespace with the tree): only TMPDIR is checked.
func (e *env) assertNoLeftovers(pids []int, tracking string) {
	e.t.Helper()
	if tracking == "pidns" {
		pids = nil
	}
	for _, pid := range pids {
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !bytes.Contains(stat, []byte(") Z ")) {
			e.t.Errorf("process %d of the tree is still alive", pid)
		}
	}
	marker := []byte("TMPDIR=" + e.tmp + "\x00")
	entries, _ := os.ReadDir("/proc")
	for _, d := range entries {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		if env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ")); err == nil && bytes.Contains(env, marker) {
			if exe, _ := os.Readlink(filepath.Join("/proc", d.Name(), "exe")); exe != binary {
				e.t.Errorf("process %s (%s) of the tree is still alive", d.Name(), exe)
			}
		}
	}
}

func (e *env) pids(jobID string) []int {
	data, _ := os.ReadFile(filepath.Join(e.home, "jobs", jobID, "artifacts", "pids.txt"))
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		pid, _ := strconv.Atoi(f)
		pids = append(pids, pid)
	}
	return pids
}

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
			r := e.run("--ci", "--output", "json", strategy(tc.file))
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\nstderr: %s", r.code, r.stderr)
			}
			rep := decodeReport(t, r.stdout)
			if rep.Status != job.StatusFailed || rep.Failure == nil || rep.Failure.Kind != tc.kind || rep.Failure.Hook != tc.hook {
				t.Fatalf("status %s failure %+v, want %s in %s", rep.Status, rep.Failure, tc.kind, tc.hook)
			}
			saved := e.run("status", "--output", "json", rep.JobID)
			if saved.code != 0 || decodeReport(t, saved.stdout).Failure.Kind != tc.kind {
				t.Fatalf("saved job: exit %d %s", saved.code, saved.stdout)
			}
			pids := e.pids(rep.JobID)
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
	gone := e.runOutputGone("--ci", "--output", "json", strategy("ok_counter.py"), "--param", "every=5000")
	if gone.code != 141 || gone.stderr != "" {
		t.Fatalf("the report to a gone reader: exit %d, want 141\n%s", gone.code, gone.stderr)
	}
	reports, err := job.ReadStore(e.home).List()
	if err != nil || len(reports) != 1 || reports[0].Status != job.StatusPassed {
		t.Fatalf("the job: %v, %d reports, want one, passed", err, len(reports))
	}
	e.assertNoLeftovers(nil, "pidns")
}

func TestTextReportAndJobCommands(t *testing.T) {
	e := newEnv(t)
	r := e.run("--ci", strategy("ok_counter.py"), "--param", "every=5000")
	if r.code != 0 || !strings.Contains(r.stdout, "PASSED") || !strings.Contains(r.stdout, "on_data          20,160") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r.stderr != "" {
		t.Fatalf("stderr is not a terminal, yet: %q", r.stderr)
	}
	failed := e.run("--ci", strategy("exception_helper.py"))
	if failed.code != 1 || !strings.Contains(failed.stdout, "exception in on_data, event #4 at") || !strings.Contains(failed.stdout, "ZeroDivisionError") {
		t.Fatalf("exit %d\n%s", failed.code, failed.stdout)
	}

	jobs := e.run("jobs")
	lines := strings.Split(strings.TrimSpace(jobs.stdout), "\n")
	if jobs.code != 0 || len(lines) != 3 || !strings.Contains(lines[1], "failed") || !strings.Contains(lines[1], "exception in on_data") || !strings.Contains(lines[2], "passed") {
		t.Fatalf("jobs:\n%s", jobs.stdout)
	}
	var list []*job.Report
	if err := json.Unmarshal([]byte(e.run("jobs", "--output", "json").stdout), &list); err != nil || len(list) != 2 {
		t.Fatalf("jobs --output json: %v, %d jobs", err, len(list))
	}
	passedID, failedID := list[1].JobID, list[0].JobID

	logs := e.run("logs", passedID)
	if logs.code != 0 || strings.Count(logs.stdout, "\n") != 4 || !strings.Contains(logs.stdout, "stdout bar 5000 SYNB") {
		t.Fatalf("logs:\n%s", logs.stdout)
	}
	jl := e.run("logs", "--output", "jsonl", passedID)
	var first job.LogLine
	if err := json.Unmarshal([]byte(strings.SplitN(jl.stdout, "\n", 2)[0]), &first); err != nil || first.Stream != "stdout" {
		t.Fatalf("logs --output jsonl: %v %+v", err, first)
	}
	diff := e.run("status", passedID, "--diff", failedID)
	if diff.code != 0 || !strings.Contains(diff.stdout, "≠ status") || !strings.Contains(diff.stdout, "≠ strategy sha256") {
		t.Fatalf("diff:\n%s", diff.stdout)
	}
	for _, args := range [][]string{{"status", "nope"}, {"logs", "nope"}, {"status", passedID, "--diff", "nope"}} {
		r := e.run(args...)
		// status takes a job or a sweep id: "unknown job or sweep".
		if r.code != 2 || !strings.Contains(r.stderr, `unknown job`) || !strings.Contains(r.stderr, `"nope"`) {
			t.Fatalf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}

	// Short job ids, wherever a job id is taken: latest, the 4-character
	// suffix, a unique prefix; an ambiguous one lists the candidates.
	suffix := passedID[len(passedID)-4:]
	for _, args := range [][]string{{"status", "latest"}, {"status", suffix, "--diff", "latest"}, {"logs", suffix}, {"status", failedID[:len(failedID)-2]}} {
		r := e.run(args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	if latest := e.run("status", "latest", "--output", "json"); decodeReport(t, latest.stdout).JobID != failedID {
		t.Fatalf("status latest is not the newest job:\n%s", latest.stdout)
	}
	common := passedID[:len("20261201-")]
	if r := e.run("status", common); r.code != 2 || !strings.Contains(r.stderr, "is ambiguous: it fits 2 jobs") ||
		!strings.Contains(r.stderr, passedID) || !strings.Contains(r.stderr, failedID) {
		t.Fatalf("status %s: exit %d, stderr %q", common, r.code, r.stderr)
	}
	// jobs filters and limits.
	if r := e.run("jobs", "--status", "failed"); strings.Count(r.stdout, "\n") != 2 || !strings.Contains(r.stdout, failedID) {
		t.Fatalf("jobs --status failed:\n%s", r.stdout)
	}
	if r := e.run("jobs", "--limit", "1"); !strings.Contains(r.stdout, failedID) || strings.Contains(r.stdout, passedID) ||
		!strings.Contains(r.stdout, "… 1 older job not shown") {
		t.Fatalf("jobs --limit 1:\n%s", r.stdout)
	}
	if r := e.run("jobs", "--strategy", "ok_counter", "--output", "json"); !strings.Contains(r.stdout, passedID) || strings.Contains(r.stdout, failedID) {
		t.Fatalf("jobs --strategy ok_counter:\n%s", r.stdout)
	}
}

func TestDeterministicRuns(t *testing.T) {
	e := newEnv(t)
	a := decodeReport(t, e.run("--ci", "--output", "json", "python/example/strategy.py").stdout)
	b := decodeReport(t, e.run("--ci", "--output", "json", "python/example/strategy.py").stdout)
	if a.Fingerprint != b.Fingerprint || a.OrdersHash != b.OrdersHash || !reflect.DeepEqual(a.Metrics, b.Metrics) {
		t.Fatalf("two runs differ:\n%+v\n%+v", a.Metrics, b.Metrics)
	}
	c := decodeReport(t, e.run("--ci", "--output", "json", "python/example/strategy.py", "--param", "fast=5").stdout)
	if c.Fingerprint == a.Fingerprint || c.OrdersHash == a.OrdersHash {
		t.Fatal("different params, same fingerprint and orders")
	}
	diff := e.run("status", a.JobID, "--diff", b.JobID)
	if !strings.Contains(diff.stdout, "same inputs, same orders and fills") {
		t.Fatalf("diff:\n%s", diff.stdout)
	}
}

func TestUsageErrors(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bars.csv")
	os.WriteFile(bad, []byte("timestamp,symbol,open,high,low,close,volume\n2026-01-01T00:00:00Z,A,1,2,0.5,1.5,10\n2026-01-01T00:01:00Z,A,1,2,0.5,abc,10\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--ci", filepath.Join(dir, "missing.py")}, "missing.py: no such file"},
		{[]string{"--ci", strategy("ok_counter.py"), "--data", bad}, `line 3 field "close"`},
		{[]string{"--ci", strategy("ok_counter.py"), "--data", filepath.Join(dir, "nope.csv")}, "nope.csv"},
		{[]string{"--ci", strategy("ok_counter.py"), "--param", "slow=3"}, `declares no param "slow"`},
		{[]string{"--ci", strategy("ok_counter.py"), "--output", "yaml"}, `--output "yaml"`},
		{[]string{"--ci", strategy("ok_counter.py"), "--python", "/nonexistent/python"}, "/nonexistent/python"},
		{[]string{"--ci", strategy("ok_counter.py"), "--from", "yesterday"}, "yesterday"},
		{[]string{"--ci", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"--ci", strategy("ok_counter.py"), "--fee-bp", "1"}, "unknown flag: --fee-bp; did you mean --fee-bps?"},
		{[]string{"jobs", "--limt", "1"}, "did you mean --limit?"},
		{[]string{"jobs", "--output", "yaml"}, `--output "yaml": want text or json`},
		{[]string{"status", "x", "--diff", "y", "--output", "yaml"}, `--output "yaml": want text or json`},
		// A mistyped command is no strategy; nor is a file that is not
		// Python; the workbench without a terminal says to use --ci.
		{[]string{"stauts"}, `unknown command "stauts"; did you mean "status"?`},
		{[]string{"--ci", "jbos"}, `did you mean "jobs"?`},
		// With the command's own arguments and flags after it.
		{[]string{"swep", strategy("ok_counter.py"), "--ci"}, `unknown command "swep"; did you mean "keep" or "sweep" or "sweeps"?`},
		{[]string{"stauts", "latest"}, `unknown command "stauts"; did you mean "status"?`},
		{[]string{"sweeep", strategy("ok_counter.py"), "--ci", "--grid", "every=5"}, `unknown command "sweeep"; did you mean "sweep"`},
		{[]string{"sweps", "--output", "json"}, `unknown command "sweps"; did you mean "sweep" or "sweeps"?`},
		{[]string{strategy("ok_counter.py"), "extra.py"}, "accepts at most 1 arg(s), received 2"},
		{[]string{"--ci", filepath.Join(dir, "strat.txt")}, "is not a Python file (.py)"},
		{[]string{strategy("noop.py")}, "the workbench needs a terminal, and there is none here: run it headless with --ci"},
		{[]string{strategy("noop.py"), "--theme", "neon"}, `unknown theme "neon" (themes: dark, light, high-contrast)`},
		{[]string{strategy("noop.py"), "--theme", "auto"}, "the workbench needs a terminal"},
	} {
		r := e.run(tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
		if r.stdout != "" {
			t.Errorf("%v: stdout %q", tc.args, r.stdout)
		}
	}
	if list := e.run("jobs", "--output", "json"); strings.TrimSpace(list.stdout) != "[]" {
		t.Fatalf("bad input left jobs behind: %s", list.stdout)
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
			cmd := e.command("--ci", "--output", "json", strategy("slow_finish.py"))
			var out bytes.Buffer
			cmd.Stdout = &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitForLog(t, e.home, "first bar", 20*time.Second) // the run is under way
			cmd.Process.Signal(tc.sig)
			err := cmd.Wait()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != tc.code {
				t.Fatalf("exit %v, want %d", err, tc.code)
			}
			rep := decodeReport(t, out.String())
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

// waitForLog waits until some job folder under home has a logs.jsonl
// containing text.
func waitForLog(t *testing.T, home, text string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		matches, _ := filepath.Glob(filepath.Join(home, "jobs", "*", "logs.jsonl"))
		for _, m := range matches {
			if data, err := os.ReadFile(m); err == nil && bytes.Contains(data, []byte(text)) {
				return filepath.Base(filepath.Dir(m))
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no job log with %q after %s", text, timeout)
	return ""
}

// TestLogFloodKeepsMemoryBounded: 100 MiB printed, 64 MiB kept, one notice,
// and stratbench's own peak RSS stays under 200 MiB.
func TestLogFloodKeepsMemoryBounded(t *testing.T) {
	e := newEnv(t)
	cmd := e.command("--ci", "--output", "json", strategy("log_flood.py"))
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var peak int64
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if kb := vmHWM(cmd.Process.Pid); kb > 0 {
				peak = max(peak, kb<<10)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	wg.Wait()
	if err != nil {
		t.Fatalf("exit %v", err)
	}
	rep := decodeReport(t, out.String())
	if rep.Status != job.StatusPassed || !rep.Logs.Truncated || rep.Logs.Bytes != 64<<20 {
		t.Fatalf("status %s logs %+v", rep.Status, rep.Logs)
	}
	notices := strings.Count(e.run("logs", "--output", "jsonl", rep.JobID).stdout, `"stream":"system"`)
	if notices != 1 {
		t.Fatalf("%d truncation notices", notices)
	}
	t.Logf("stratbench peak RSS during a 100 MiB flood: %.1f MiB", float64(peak)/(1<<20))
	if peak == 0 || peak > 200<<20 {
		t.Fatalf("stratbench peak RSS %d bytes", peak)
	}
}

func vmHWM(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}

// TestKilledStratbenchIsCleanedUp: after stratbench is SIGKILLed mid-run,
// the next stratbench command kills the leftovers of its tree (a setsid'd
// grandchild survives a parent-death signal) and marks the job failed. With
// the fallback tree tracking: in a PID namespace the tree dies with
// stratbench (see the supervisor's tests).
func TestKilledStratbenchIsCleanedUp(t *testing.T) {
	e := newEnv(t)
	cmd := e.command("--ci", strategy("orphan_sleeper.py"))
	cmd.Env = append(cmd.Env, "STRATBENCH_TREE_TRACKING=fallback")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var id string
	deadline := time.Now().Add(20 * time.Second)
	for id == "" && time.Now().Before(deadline) {
		matches, _ := filepath.Glob(filepath.Join(e.home, "jobs", "*", "artifacts", "pids.txt"))
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
	waitForRecorded(t, filepath.Join(e.home, "jobs", id, "procs.json"), e.pids(id), 20*time.Second)
	cmd.Process.Kill()
	cmd.Wait()
	pids := e.pids(id)
	if len(pids) != 1 || syscall.Kill(pids[0], 0) != nil {
		t.Fatalf("sleeper %v should have survived the kill of stratbench", pids)
	}
	jobs := e.run("jobs")
	if !strings.Contains(jobs.stdout, "crash in") {
		t.Fatalf("jobs after recovery:\n%s", jobs.stdout)
	}
	e.assertNoLeftovers(pids, "fallback")
}

// TestKilledRunKeepsItsParams: the report of a run in flight carries the
// params it runs with (the MANIFEST's defaults with --param), and so does
// the report a run whose stratbench was killed with SIGKILL is recovered
// as (failed, a crash): `status` shows them.
func TestKilledRunKeepsItsParams(t *testing.T) {
	e := newEnv(t)
	cmd := e.command("--ci", sweepStrategy, "--param", "fast=3", "--param", "slow_ms=5")
	e.launch(cmd)
	want := map[string]any{"fast": 3.0, "slow": 20.0, "fail_at": -1.0, "slow_ms": 5.0}
	id := e.waitForRunSaying(60*time.Second, "first bar", nil)
	data, err := os.ReadFile(filepath.Join(e.home, "jobs", id, "job.json"))
	if err != nil {
		t.Fatal(err)
	}
	running := decodeReport(t, string(data))
	if running.Status != job.StatusRunning || !reflect.DeepEqual(running.Strategy.Params, want) {
		t.Fatalf("job.json of the run in flight: status %s params %v, want running with %v", running.Status, running.Strategy.Params, want)
	}
	cmd.Process.Kill()
	cmd.Wait()
	killedAt := time.Now()
	// What a kill in the middle of an atomic write of job.json leaves.
	leftover := filepath.Join(e.home, "jobs", id, strings.Replace(atomicfile.TempPattern("job.json"), "*", "2718281828", 1))
	if err := os.WriteFile(leftover, []byte(`{"status": "run`), 0o644); err != nil {
		t.Fatal(err)
	}
	st := e.run("status", id, "--output", "json")
	rep := decodeReport(t, st.stdout)
	if rep.Status != job.StatusFailed || rep.Failure == nil || rep.Failure.Kind != contract.KindCrash ||
		!strings.Contains(rep.Failure.Message, "it was killed") {
		t.Fatalf("status of the killed run: %s %+v, want failed with a crash\n%s", rep.Status, rep.Failure, st.stderr)
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
	if text := e.run("status", id).stdout; !strings.Contains(text, "fail_at=-1 fast=3 slow=20 slow_ms=5") {
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
		args := append([]string{"--ci", "--output", "json", strategy("sandbox_probe.py"), "--param", "home=" + home}, extra...)
		cmd := e.command(args...)
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
		rep := decodeReport(t, string(out))
		if rep.Python.Sandbox != (len(extra) > 0) {
			t.Fatalf("%v: report sandbox %v", extra, rep.Python.Sandbox)
		}
		var got map[string]string
		if err := json.Unmarshal(rep.Metadata, &got); err != nil {
			t.Fatal(err)
		}
		if data, err := os.ReadFile(filepath.Join(e.home, "jobs", rep.JobID, "artifacts", "probe.txt")); err != nil || len(data) == 0 {
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

func TestSandboxRequiredByEnvironment(t *testing.T) {
	e := newEnv(t)
	for _, v := range []string{"1", "yes", "true"} {
		cmd := e.command("--ci", strategy("ok_counter.py"))
		cmd.Env = append(cmd.Env, "STRATBENCH_PYTHON_SANDBOX="+v)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(errb.String(), `the only value is "required"`) {
			t.Fatalf("STRATBENCH_PYTHON_SANDBOX=%s: %v %q, want exit 2", v, err, errb.String())
		}
	}
	cmd := e.command("--ci", "--output", "json", "--sandbox=false", strategy("ok_counter.py"))
	cmd.Env = append(cmd.Env, "STRATBENCH_PYTHON_SANDBOX=required")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if rep := decodeReport(t, string(out)); !rep.Python.Sandbox || rep.Status != job.StatusPassed {
		t.Fatalf("sandbox %v status %s", rep.Python.Sandbox, rep.Status)
	}
}

// TestSandboxRefusal: where Landlock ABI 6 is missing (forced here), a
// sandboxed run refuses to start with exit 2 and says what it found.
func TestSandboxRefusal(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{
		{"--ci", "--sandbox", strategy("ok_counter.py")},
		{"precheck", strategy("ok_counter.py"), "--from", "2026-01-05 00:00:00", "--to", "2026-01-05 08:00:00"},
	} {
		cmd := e.command(args...)
		cmd.Env = append(cmd.Env, "STRATBENCH_SANDBOX_ABI_OVERRIDE=5")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 {
			t.Fatalf("%v: %v, want exit 2", args, err)
		}
		if !strings.HasPrefix(errb.String(), "stratbench: refusing to run: sandbox unavailable: Landlock ABI 5 found") || out.Len() != 0 {
			t.Fatalf("%v: stderr %q stdout %q", args, errb.String(), out.String())
		}
	}
}

func TestPrecheck(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "strategy.py")
	src, _ := os.ReadFile(strategy("ok_counter.py"))
	os.WriteFile(script, src, 0o644)
	from, to := "2026-01-05 00:00:00", "2026-01-05 07:59:00" // 960 events of the sample
	precheck := func(extra ...string) result {
		return e.run(append([]string{"precheck", script, "--from", from, "--to", to, "--output", "json"}, extra...)...)
	}
	status := func(r result) string {
		var res struct{ Status string }
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatalf("precheck output: %v\n%s\n%s", err, r.stdout, r.stderr)
		}
		return res.Status
	}
	if r := precheck(); r.code != 0 || status(r) != "passed" {
		t.Fatalf("first precheck: exit %d %s", r.code, r.stdout)
	}
	if r := precheck(); r.code != 0 || status(r) != "already_checked" {
		t.Fatalf("second precheck: exit %d %s", r.code, r.stdout)
	}
	if r := precheck("--param", "every=10"); status(r) != "passed" {
		t.Fatalf("new params: %s", r.stdout)
	}
	if r := e.run("precheck", script, "--from", from, "--to", to, "--param", "every=10"); !strings.HasPrefix(r.stdout, "already checked") {
		t.Fatalf("text output: %s", r.stdout)
	}
	os.WriteFile(script, append(src, []byte("\n# edited\n")...), 0o644)
	if r := precheck(); status(r) != "passed" {
		t.Fatalf("edited script: %s", r.stdout)
	}
	records, _ := filepath.Glob(filepath.Join(e.home, "prechecks", "*.json"))
	if len(records) != 3 {
		t.Fatalf("%d precheck records, want 3", len(records))
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--from", "2026-01-05 00:00:00", "--to", "2026-01-06 00:00:01"}, "the limit is 24 hours"},
		{[]string{"--from", "2026-01-05 00:00:00", "--to", "2026-01-05 09:00:00"}, "has 1082 events; the limit is 1,000"},
		{[]string{"--from", "2026-01-05 00:00:00"}, "needs --from and --to"},
	} {
		r := e.run(append([]string{"precheck", script}, tc.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d stderr %q, want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	failing := e.run("precheck", strategy("exception_helper.py"), "--from", from, "--to", to)
	if failing.code != 1 || !strings.Contains(failing.stdout, "precheck failed") {
		t.Fatalf("failing precheck: exit %d %s", failing.code, failing.stdout)
	}
}

// TestRejectionsReachOnExecution: orders the market refuses come back to
// on_execution with a reason; nothing crashes.
func TestRejectionsReachOnExecution(t *testing.T) {
	e := newEnv(t)
	r := e.run("--ci", "--output", "json", strategy("bad_orders.py"))
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stdout)
	}
	rep := decodeReport(t, r.stdout)
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
			r := e.run(append([]string{"--ci", "--output", "json", "--data", data, strat}, tc.flags...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			rep := decodeReport(t, r.stdout)
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

// agree reports whether a and b agree to 1e-9 relative (absolute near 0).
func agree(a, b float64) bool {
	d := math.Abs(a - b)
	return d <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) || d < 1e-12
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
	cmd := e.command("--ci", "--watch", "--output", "json", script)
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
			return decodeReport(t, line)
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
	run := e.command("--ci", strategy("slow_finish.py"))
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	id := waitForLog(t, e.home, "first bar", 20*time.Second)
	follow := e.command("logs", "--follow", id)
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
	jobs := e.run("jobs")
	if !strings.Contains(jobs.stdout, id) || !strings.Contains(jobs.stdout, "stopped") {
		t.Fatalf("jobs:\n%s", jobs.stdout)
	}
}

// TestJobIDCompletion: shell completion offers job ids.
func TestJobIDCompletion(t *testing.T) {
	e := newEnv(t)
	rep := decodeReport(t, e.run("--ci", "--output", "json", strategy("ok_counter.py")).stdout)
	for _, args := range [][]string{{"__complete", "status", ""}, {"__complete", "logs", rep.JobID[:8]}} {
		r := e.run(args...)
		if !strings.Contains(r.stdout, rep.JobID) {
			t.Fatalf("%v: %q", args, r.stdout)
		}
	}
}

// TestSecondSignalKills: a second SIGINT while on_finish runs kills the run
// at once; the job is saved as stopped and the exit code is 130. SIGHUP (the
// terminal closed) is a stop request too, with 129.
func TestSecondSignalKills(t *testing.T) {
	e := newEnv(t)
	cmd := e.command("--ci", "--output", "json", strategy("slow_on_finish.py"))
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForLog(t, e.home, "first bar", 20*time.Second)
	cmd.Process.Signal(syscall.SIGINT)
	waitForLog(t, e.home, "on_finish started", 10*time.Second)
	start := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130", err)
	}
	if el := time.Since(start); el > 1500*time.Millisecond {
		t.Fatalf("the second signal took %s to end the run", el)
	}
	if rep := decodeReport(t, out.String()); rep.Status != job.StatusStopped {
		t.Fatalf("status %s", rep.Status)
	}

	e = newEnv(t) // a home of its own: the log waited for is this run's
	hup := e.command("--ci", strategy("slow_finish.py"))
	if err := hup.Start(); err != nil {
		t.Fatal(err)
	}
	waitForLog(t, e.home, "first bar", 20*time.Second)
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
	src, _ := os.ReadFile(strategy("slow_on_finish.py"))
	os.WriteFile(script, src, 0o644)
	cmd := e.command("--ci", "--watch", "--output", "json", script)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForLog(t, e.home, "first bar", 20*time.Second)
	os.WriteFile(script, append(src, []byte("\n# saved\n")...), 0o644)
	waitForLog(t, e.home, "on_finish started", 10*time.Second)
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 143 {
		t.Fatalf("exit %v, want 143", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d reports, want the stopped run's only:\n%s", len(lines), out.String())
	}
	rep := decodeReport(t, lines[0])
	if rep.Status != job.StatusStopped || rep.Hooks[contract.HookOnFinish].Count != 1 {
		t.Fatalf("status %s, on_finish %+v", rep.Status, rep.Hooks[contract.HookOnFinish])
	}
}
