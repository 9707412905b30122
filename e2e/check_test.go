package e2e

// End-to-end tests of `stratbench check` through the binary: it finds each
// planted bias of testdata/check/, naming the event, its time, the hook and
// the commands of both runs, and finds nothing in the bundled examples and
// the moving-average strategies of testdata/. Bad usage is
// testdata/script/check_usage.txtar.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"stratbench/check"
	"stratbench/internal/testenv"
)

// checkOutput is `check --output json`.
type checkOutput struct {
	Strategy string `json:"strategy"`
	check.Report
}

// runCheck runs `check` with args and --output json, wants exit code want,
// and decodes the output.
func runCheck(t *testing.T, e *env, want int, args ...string) *checkOutput {
	t.Helper()
	r := e.Run(append([]string{"check", "--output", "json"}, args...)...)
	if r.Code != want {
		t.Fatalf("check %v: exit %d, want %d\n%s\n%s", args, r.Code, want, r.Stdout, r.Stderr)
	}
	var out checkOutput
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.Stdout)
	}
	if len(out.Checks) != 3 {
		t.Fatalf("%d checks: %s", len(out.Checks), r.Stdout)
	}
	return &out
}

// result is the result of the check named.
func (o *checkOutput) result(t *testing.T, name string) check.Result {
	t.Helper()
	for _, r := range o.Checks {
		if r.Check == name {
			return r
		}
	}
	t.Fatalf("no %s check in %+v", name, o.Checks)
	return check.Result{}
}

// plantedStrategy copies testdata/check/name into a folder of its own,
// with the data file it reads (bars.csv: a random walk of 1,500 bars), and
// returns the strategy's and the data's paths.
func plantedStrategy(t *testing.T, name string) (strategy, bars string) {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "check", name))
	if err != nil {
		t.Fatal(err)
	}
	strategy = filepath.Join(dir, name)
	if err := os.WriteFile(strategy, src, 0o644); err != nil {
		t.Fatal(err)
	}
	walk, err := os.ReadFile(randomWalk(t, 11, 1500, 4, 0))
	if err != nil {
		t.Fatal(err)
	}
	bars = filepath.Join(dir, "bars.csv")
	if err := os.WriteFile(bars, walk, 0o644); err != nil {
		t.Fatal(err)
	}
	return strategy, bars
}

// wantFinding checks that the check named found something, and that its
// finding names an event with its time, the hook, and commands in both
// runs (or the replay's failure).
func wantFinding(t *testing.T, out *checkOutput, name string) *check.Finding {
	t.Helper()
	r := out.result(t, name)
	f := r.Finding
	if r.Status != check.Found || f == nil {
		t.Fatalf("%s: %s, %q; want a finding", name, r.Status, r.Summary)
	}
	if _, err := time.Parse(time.RFC3339Nano, f.Time); err != nil || f.Event < 0 || f.Event >= out.Events {
		t.Errorf("%s: event %d at %q", name, f.Event, f.Time)
	}
	if f.Hook != "on_data" || len(f.Run) == 0 || len(f.Replay) == 0 && f.Failure == "" || f.Against == "" {
		t.Errorf("%s: finding %+v", name, f)
	}
	if strings.Join(f.Run, ";") == strings.Join(f.Replay, ";") && f.Failure == "" {
		t.Errorf("%s: the same commands in both runs: %+v", name, f)
	}
	t.Logf("%s: %s\n  event %d at %s (%s), hook %s\n  the run: %v\n  %s: %v %s", name, r.Summary, f.Event, f.Time, f.Symbol, f.Hook,
		f.Run, f.Against, f.Replay, f.Failure)
	return f
}

// TestCheckFindsLookAhead: a strategy that reads its data file at import
// and trades on a later bar, and one that computes a centred rolling mean
// over the whole file at import, are found by the replays whose data, and
// data file, end at an event; they are deterministic.
func TestCheckFindsLookAhead(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{"lookahead_file.py", "centred_window.py"} {
		t.Run(name, func(t *testing.T) {
			strategy, bars := plantedStrategy(t, name)
			out := runCheck(t, e, 1, strategy, "--data", bars)
			if r := out.result(t, check.Determinism); r.Status != check.Clean {
				t.Errorf("determinism: %s %q", r.Status, r.Summary)
			}
			f := wantFinding(t, out, check.LookAhead)
			if !strings.Contains(f.Against, "a replay whose data ends at event") {
				t.Errorf("against %q", f.Against)
			}
			// The replays were forked from warm templates, their data
			// files cut in their own mount namespaces.
			if out.Warm < out.Replays-1 {
				t.Errorf("%d of %d runs warm", out.Warm, out.Replays)
			}
			// The data file is as it was.
			if b, _ := os.ReadFile(bars); strings.Count(string(b), "\n") != 1501 {
				t.Errorf("bars.csv has %d lines after the check", strings.Count(string(b), "\n"))
			}
		})
	}
}

// TestCheckFindsNonDeterminism: state kept in a file between runs, and an
// unseeded generator, make the same run twice differ; the other checks are
// skipped.
func TestCheckFindsNonDeterminism(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{"state_file.py", "unseeded_random.py"} {
		t.Run(name, func(t *testing.T) {
			strategy, bars := plantedStrategy(t, name)
			out := runCheck(t, e, 1, strategy, "--data", bars)
			f := wantFinding(t, out, check.Determinism)
			if f.Against != "the same run from a warm template" {
				t.Errorf("against %q", f.Against)
			}
			for _, c := range []string{check.LookAhead, check.WarmUp} {
				if r := out.result(t, c); r.Status != check.Skipped {
					t.Errorf("%s: %s, want skipped", c, r.Status)
				}
			}
		})
	}
}

// TestCheckFindsPathDependence: a strategy that stops buying after its
// fifth trade decides otherwise than a replay from a later start long after
// the MANIFEST's history.
func TestCheckFindsPathDependence(t *testing.T) {
	e := newEnv(t)
	strategy, bars := plantedStrategy(t, "path_dependent.py")
	out := runCheck(t, e, 1, strategy, "--data", bars)
	f := wantFinding(t, out, check.WarmUp)
	if !strings.Contains(f.Against, "a replay from event") {
		t.Errorf("against %q", f.Against)
	}
	if r := out.result(t, check.LookAhead); r.Status != check.Clean {
		t.Errorf("look-ahead: %s %q", r.Status, r.Summary)
	}
}

// TestCheckCleanStrategies: the bundled example, its numpy twin and the
// moving-average strategies of testdata/ (one, two symbols, limit orders)
// have nothing to find, on the
// bundled data and on a data file (cut for their replays too); the text
// output says so, one line a check.
func TestCheckCleanStrategies(t *testing.T) {
	e := newEnv(t)
	for _, s := range []struct {
		path  string
		numpy bool
	}{
		{"python/example/strategy.py", false},
		{"python/example/numpy_strategy.py", true},
		{"testdata/sweep/sma.py", false},
		{"backtest/testdata/sma_cross.py", false},
		{"backtest/testdata/sma_cross_pair.py", false},
		// Limit orders cancelled after a few bars: a replay waits on
		// other orders than the full run until they meet.
		{"backtest/testdata/limit_cross.py", false},
	} {
		t.Run(filepath.Base(s.path), func(t *testing.T) {
			args := []string{s.path}
			if s.numpy {
				args = append(args, "--python", testenv.Python(t))
			}
			out := runCheck(t, e, 0, args...)
			for _, r := range out.Checks {
				if r.Status != check.Clean {
					t.Errorf("%s: %s %q %+v", r.Check, r.Status, r.Summary, r.Finding)
				}
			}
			if out.Replays < 10 || out.Events != 20160 {
				t.Errorf("%d replays over %d events", out.Replays, out.Events)
			}
		})
	}
	// On a data file, in text.
	_, bars := plantedStrategy(t, "lookahead_file.py")
	r := e.Run("check", "python/example/strategy.py", "--data", bars)
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{"✓ determinism", "✓ look-ahead", "✓ warm-up"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("no %q in\n%s", want, r.Stdout)
		}
	}
}

// TestCheckLeftoversGo: a check keeps its replays' jobs and cut data
// copies in the home's tmp/ (not the system's /tmp), held while it runs;
// killed with SIGKILL it leaves them, and prune removes what nothing
// holds any more (h-attack4: /tmp/stratbench-check-* stayed forever).
func TestCheckLeftoversGo(t *testing.T) {
	e := newEnv(t)
	strategy, bars := plantedStrategy(t, "lookahead_file.py")
	cmd := e.Command("check", strategy, "--data", bars)
	// In a process group of its own, killed whole below: a child it has
	// forked and not yet executed shares its descriptors, and so its
	// holds, until it does.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	e.Launch(cmd)
	// Its scratch folder appears once it has started its replays.
	tmp := filepath.Join(e.Home, "tmp")
	var scratch string
	for deadline := time.Now().Add(time.Minute); scratch == ""; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no scratch folder in the home's tmp/")
		}
		jobs, _ := filepath.Glob(filepath.Join(tmp, "check-*", "jobs", "*"))
		if len(jobs) > 0 {
			scratch = filepath.Dir(filepath.Dir(jobs[0]))
		}
	}
	// Held: prune leaves it, however old it looks.
	old := time.Now().Add(-time.Hour)
	os.Chtimes(scratch, old, old)
	if r := e.Run("prune", "--yes"); r.Code != 0 || strings.Contains(r.Stdout, "scratch folder") {
		t.Fatalf("prune while the check runs: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	for deadline := time.Now().Add(time.Minute); groupAlive(cmd.Process.Pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the killed check's processes are still there")
		}
	}
	if _, err := os.Stat(scratch); err != nil {
		t.Fatalf("the killed check's scratch folder: %v", err)
	}
	// A folder of a check that was just killed may be one being made:
	// prune takes it after a minute unchanged.
	os.Chtimes(scratch, old, old)
	r := e.Run("prune", "--yes")
	if r.Code != 0 || !strings.Contains(r.Stdout, "removed 1 scratch folder that a killed check left") {
		t.Fatalf("prune: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(scratch); err == nil {
		t.Fatalf("prune left %s", scratch)
	}
	if left, _ := filepath.Glob(filepath.Join(e.Tmp, "stratbench-check-*")); len(left) > 0 {
		t.Errorf("the check wrote in TMPDIR: %v", left)
	}
}

// groupAlive reports whether a process of the process group pgid is alive
// (a zombie is not).
func groupAlive(pgid int) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}
