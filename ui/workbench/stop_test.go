package workbench

import (
	"context"
	"strings"
	"testing"

	"stratbench/contract"
	"stratbench/job"
)

// TestStopKeyTwiceKills: s stops the run (on_finish runs), a second s while
// it stops cancels the run's own context, which kills it; s with no run in
// flight says so.
func TestStopKeyTwiceKills(t *testing.T) {
	m := newTestModel(t, 120, 40)
	m.Update(press("s"))
	if s := screen(m); !strings.Contains(s, "no run in flight: nothing to stop") {
		t.Fatalf("s when idle said nothing:\n%s", s)
	}
	run := newFakeRun(testJob, 0)
	var runCtx context.Context
	m.opts.Start = func(ctx context.Context, _ []job.Breakpoint) (RunHandle, error) { runCtx = ctx; return run, nil }
	m.requestRun()
	m.Update(m.startCmd(m.gen)())
	if m.state != runRunning || runCtx == nil {
		t.Fatalf("state %d after the start", m.state)
	}
	m.Update(press("s"))
	if run.stops() != 1 || m.state != runStopping || runCtx.Err() != nil {
		t.Fatalf("first s: %d stops, state %d, ctx %v", run.stops(), m.state, runCtx.Err())
	}
	if s := screen(m); !strings.Contains(s, "s again: kill it now") {
		t.Fatalf("stopping does not say s kills:\n%s", s)
	}
	m.Update(press("s"))
	if runCtx.Err() == nil {
		t.Fatal("a second s did not kill the run")
	}
	if s := screen(m); !strings.Contains(s, "killing the run") {
		t.Fatalf("no word of the kill:\n%s", s)
	}
}

// TestFailureDoesNotStealFocus: a run that fails while the user reads the
// logs shows its failure in the slot and marks it, leaving the focus where
// it was; with the results focused, the failure takes their place.
func TestFailureDoesNotStealFocus(t *testing.T) {
	for _, sz := range goldenSizes {
		m := newTestModel(t, sz[0], sz[1])
		startRun(m, newFakeRun(testJob, 0))
		m.Update(press("3"))
		feed(m, job.Finished{JobID: testJob, Report: failedReport(testJob, contract.KindException)})
		if m.focus != paneLogs || m.slot != paneFailure {
			t.Fatalf("%v: focus %v, slot %v; want the logs focused, the failure in the slot", sz, m.focus, m.slot)
		}
		if m.layout.tabs && !strings.Contains(screen(m), "✗4 Failure") {
			t.Fatalf("%v: the failure tab is not marked:\n%s", sz, screen(m))
		}
		closeRun(m)
		startRun(m, newFakeRun(testJob+"-2", 0))
		m.Update(press("5"))
		feed(m, job.Finished{JobID: testJob + "-2", Report: failedReport(testJob+"-2", contract.KindException)})
		if m.focus != paneFailure {
			t.Fatalf("%v: with the results focused, a failure left focus on %v", sz, m.focus)
		}
	}
}
