package e2e

// End-to-end tests of breakpoint() where no person can answer a prompt
// (docs/strategy.md, "Debugging"): --ci, --ci --sandbox and a sweep note
// each place once in the log and go on; a storm of calls neither hangs
// nor floods. The workbench's stops are engine/debug_test.go's, and
// .ci/e2e-tui.sh's through tmux.

import (
	"strings"
	"testing"

	"stratbench/internal/e2etest"
	"stratbench/job"
	"stratbench/sandbox"
)

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
	plain := e2etest.DecodeReport(t, e.Run(append([]string{"--ci", "--output", "json", e2etest.Strategy("debug_lines.py")}, e2etest.BreakpointWindow...)...).Stdout)
	if plain.Status != job.StatusPassed || plain.OrdersHash == "" {
		t.Fatalf("without breakpoint(): %s %+v", plain.Status, plain.Failure)
	}
	for _, mode := range ciModes(t) {
		args := append(append([]string{"--ci", "--output", "json"}, mode...), e2etest.Strategy("debug_breakpoint.py"))
		r := e.Run(append(args, e2etest.BreakpointWindow...)...)
		rep := e2etest.DecodeReport(t, r.Stdout)
		if r.Code != 0 || rep.Status != job.StatusPassed {
			t.Fatalf("%v: exit %d, %s %+v\n%s", mode, r.Code, rep.Status, rep.Failure, r.Stderr)
		}
		if rep.OrdersHash != plain.OrdersHash {
			t.Errorf("%v: orders hash %s, %s without breakpoint()", mode, rep.OrdersHash, plain.OrdersHash)
		}
		if got := e.LogLines(rep.JobID, e2etest.BreakpointNotice); len(got) != 1 {
			t.Errorf("%v: %d notices in the log, want 1: %q", mode, len(got), got)
		}
		if got := e.LogLines(rep.JobID, "breakpoint()"); len(got) != 1 {
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
		args := append(append([]string{"--ci", "--output", "json"}, mode...), e2etest.Strategy("breakpoint_storm.py"))
		r := e.Run(append(args, "--from", "2026-01-05", "--to", "2026-01-05 01:00:00")...)
		rep := e2etest.DecodeReport(t, r.Stdout)
		if r.Code != 0 || rep.Status != job.StatusPassed {
			t.Fatalf("%v: exit %d, %s %+v\n%s", mode, r.Code, rep.Status, rep.Failure, r.Stderr)
		}
		notices := e.LogLines(rep.JobID, "stratbench: breakpoint()")
		if len(notices) != 101 || !strings.Contains(notices[100], "breakpoint() calls at more than 100 places") {
			t.Errorf("%v: %d notices, want 100 places and one line for the rest", mode, len(notices))
		}
	}
}

// TestSweepBreakpointGoesOn: a sweep's runs (forked from a warm template)
// do not stop at breakpoint(): each passes and notes it once.
func TestSweepBreakpointGoesOn(t *testing.T) {
	e := newEnv(t)
	args := append([]string{"sweep", e2etest.Strategy("debug_breakpoint.py"), "--ci", "--output", "json", "--jobs", "2",
		"--grid", "warm_check=1,2"}, e2etest.BreakpointWindow...)
	r := e.Run(args...)
	doc := e2etest.DecodeSweep(t, r.Stdout)
	if r.Code != 0 || doc.Counts.Passed != 2 {
		t.Fatalf("exit %d, counts %+v\n%s", r.Code, doc.Counts, r.Stderr)
	}
	for _, run := range doc.Runs {
		if got := e.LogLines(run.JobID, e2etest.BreakpointNotice); len(got) != 1 {
			t.Errorf("run %d: %d notices, want 1: %q", run.Index, len(got), got)
		}
	}
}
