package e2e

// End-to-end tests of breakpoint() where no person can answer a prompt
// (docs/strategy.md, "Debugging"): --ci, --ci --sandbox and a sweep note
// each place once in the log and go on; a storm of calls neither hangs
// nor floods. The workbench's stops are engine/debug_test.go's, and
// .ci/e2e-tui.sh's through tmux.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stratbench/job"
	"stratbench/sandbox"
)

// breakpointWindow is six hours of the bundled data: each symbol reaches
// bar 100, where debug_breakpoint.py calls breakpoint().
var breakpointWindow = []string{"--from", "2026-01-05", "--to", "2026-01-05 06:00:00"}

// breakpointNotice is the notice debug_breakpoint.py's breakpoint() writes
// without a debugger.
const breakpointNotice = "stratbench: breakpoint() at debug_breakpoint.py:9 goes on"

// logLines returns the lines of a job's logs.jsonl that contain text.
func (e *env) logLines(jobID, text string) []string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.home, "jobs", jobID, "logs.jsonl"))
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, text) {
			out = append(out, l)
		}
	}
	return out
}

// ciModes are the ways --ci runs a strategy here: as it is, and with
// --sandbox where this machine can sandbox (a log line says why not).
func ciModes(t *testing.T) [][]string {
	t.Helper()
	if err := sandbox.Check(); err != nil {
		t.Logf("--sandbox not tested: %v", err)
		return [][]string{nil}
	}
	return [][]string{nil, {"--sandbox"}}
}

// TestCIBreakpointGoesOn: --ci on a strategy that calls breakpoint() at
// bar 100 (of each symbol) passes without stopping, writes exactly one
// notice naming the file and line, and orders what the same strategy
// without the breakpoint() orders; --sandbox the same.
func TestCIBreakpointGoesOn(t *testing.T) {
	e := newEnv(t)
	plain := decodeReport(t, e.run(append([]string{"--ci", "--output", "json", strategy("debug_lines.py")}, breakpointWindow...)...).stdout)
	if plain.Status != job.StatusPassed || plain.OrdersHash == "" {
		t.Fatalf("without breakpoint(): %s %+v", plain.Status, plain.Failure)
	}
	for _, mode := range ciModes(t) {
		args := append(append([]string{"--ci", "--output", "json"}, mode...), strategy("debug_breakpoint.py"))
		r := e.run(append(args, breakpointWindow...)...)
		rep := decodeReport(t, r.stdout)
		if r.code != 0 || rep.Status != job.StatusPassed {
			t.Fatalf("%v: exit %d, %s %+v\n%s", mode, r.code, rep.Status, rep.Failure, r.stderr)
		}
		if rep.OrdersHash != plain.OrdersHash {
			t.Errorf("%v: orders hash %s, %s without breakpoint()", mode, rep.OrdersHash, plain.OrdersHash)
		}
		if got := e.logLines(rep.JobID, breakpointNotice); len(got) != 1 {
			t.Errorf("%v: %d notices in the log, want 1: %q", mode, len(got), got)
		}
		if got := e.logLines(rep.JobID, "breakpoint()"); len(got) != 1 {
			t.Errorf("%v: %d lines name breakpoint(), want the one notice: %q", mode, len(got), got)
		}
	}
}

// TestCIBreakpointStorm: breakpoint() 10,000 times at one line and then
// at 150 places, in --ci (and --sandbox): the run passes, the log holds a
// notice for each of the first 100 places and one line for the rest.
func TestCIBreakpointStorm(t *testing.T) {
	e := newEnv(t)
	for _, mode := range ciModes(t) {
		args := append(append([]string{"--ci", "--output", "json"}, mode...), strategy("breakpoint_storm.py"))
		r := e.run(append(args, "--from", "2026-01-05", "--to", "2026-01-05 01:00:00")...)
		rep := decodeReport(t, r.stdout)
		if r.code != 0 || rep.Status != job.StatusPassed {
			t.Fatalf("%v: exit %d, %s %+v\n%s", mode, r.code, rep.Status, rep.Failure, r.stderr)
		}
		notices := e.logLines(rep.JobID, "stratbench: breakpoint()")
		if len(notices) != 101 || !strings.Contains(notices[100], "breakpoint() calls at more than 100 places") {
			t.Errorf("%v: %d notices, want 100 places and one line for the rest", mode, len(notices))
		}
	}
}

// TestSweepBreakpointGoesOn: a sweep's runs (forked from a warm template)
// do not stop at breakpoint(): each passes and notes it once.
func TestSweepBreakpointGoesOn(t *testing.T) {
	e := newEnv(t)
	args := append([]string{"sweep", strategy("debug_breakpoint.py"), "--ci", "--output", "json", "--jobs", "2",
		"--grid", "warm_check=1,2"}, breakpointWindow...)
	r := e.run(args...)
	doc := decodeSweep(t, r.stdout)
	if r.code != 0 || doc.Counts.Passed != 2 {
		t.Fatalf("exit %d, counts %+v\n%s", r.code, doc.Counts, r.stderr)
	}
	for _, run := range doc.Runs {
		if got := e.logLines(run.JobID, breakpointNotice); len(got) != 1 {
			t.Errorf("run %d: %d notices, want 1: %q", run.Index, len(got), got)
		}
	}
}
