package workbench

// Model tests of what the second walkthrough found in the workbench: a footer message that outlived its moment, the results
// pane titled after a failure that was not there, no word of what to do
// after the example was written here, a stored curve, a short span
// (issue 37).

import (
	"context"
	"strings"
	"testing"

	"stratbench/contract"
	"stratbench/job"
)

// TestFlashEndsWithTheNextRun: "set $VISUAL or $EDITOR…" (e without an
// editor) is cleared when the next run starts; it stayed in the footer
// through three later runs, started by saves, until a key.
func TestFlashEndsWithTheNextRun(t *testing.T) {
	m := newTestModel(t, 120, 40)
	startRun(m, newFakeRun(testJob, 0))
	feed(m, job.Finished{JobID: testJob, Report: failedReport(testJob, contract.KindException)})
	m.edit()
	if !strings.Contains(screen(m), "set $VISUAL or $EDITOR") {
		t.Fatal("without an editor, e did not explain how to set one")
	}
	closeRun(m)
	startRun(m, newFakeRun("20261201-120100.000-0002", 0))
	if s := screen(m); strings.Contains(s, "set $VISUAL or $EDITOR") {
		t.Errorf("the editor notice outlived the run it was about:\n%s", s)
	}
}

// TestWelcomeForTheExampleWrittenHere: after [Y/n] wrote the example to
// the current folder, the footer says what to do with it, as it does for
// the workspace's example; it stays through the first run and goes with
// the first save's.
func TestWelcomeForTheExampleWrittenHere(t *testing.T) {
	m := newTestModel(t, 160, 40)
	m.opts.Strategy, m.opts.Example = "strategy.py", true
	m.welcome()
	const want = "this is the bundled example: edit strategy.py in your editor and save to re-run"
	if !strings.Contains(screen(m), want) {
		t.Fatalf("no welcome for the example written here:\n%s", screen(m))
	}
	startRun(m, newFakeRun(testJob, 0))
	if !strings.Contains(screen(m), want) {
		t.Errorf("the welcome went with the first run:\n%s", screen(m))
	}
	closeRun(m)
	startRun(m, newFakeRun("20261201-120100.000-0002", 0))
	if strings.Contains(screen(m), want) {
		t.Errorf("the welcome outlived the first save's run:\n%s", screen(m))
	}
}

// TestPassedResultsNotTitledFailure: a passed run's results pane does not
// offer "(4: failure)", there being none; a failed run's does.
func TestPassedResultsNotTitledFailure(t *testing.T) {
	m := newTestModel(t, 160, 48)
	startRun(m, newFakeRun(testJob, 0))
	feed(m, job.Finished{JobID: testJob, Report: passedReport(testJob)})
	if s := screen(m); !strings.Contains(s, "5 Results") || strings.Contains(s, "(4: failure)") {
		t.Errorf("a passed run's results are titled after a failure:\n%s", s)
	}
	closeRun(m)
	startRun(m, newFakeRun("20261201-120100.000-0002", 0))
	feed(m, job.Finished{JobID: "20261201-120100.000-0002", Report: failedReport("20261201-120100.000-0002", contract.KindException)})
	m.showInSlot(paneResults)
	if s := screen(m); !strings.Contains(s, "5 Results (4: failure)") {
		t.Errorf("a failed run's results do not point at the failure:\n%s", s)
	}
}

// curveStore is a JobStore of one job whose stored equity curve has n
// values, downsampled as asked.
type curveStore struct {
	rep *job.Report
	n   int
}

func (s curveStore) List() ([]*job.Report, error)        { return []*job.Report{s.rep}, nil }
func (s curveStore) Load(id string) (*job.Report, error) { return s.rep, nil }
func (s curveStore) JobDir(id string) string             { return "/home/ana/.local/state/stratbench/jobs/" + id }
func (s curveStore) Equity(id string, points int) ([]float64, error) {
	out := make([]float64, min(points, s.n))
	for i := range out {
		out[i] = 100000 + float64(i)
	}
	return out, nil
}
func (s curveStore) Logs(ctx context.Context, id string, follow job.Follow, fn func(job.LogLine) error) error {
	return nil
}

// TestStoredCurveHasTheRunsPoints: a stored job's equity curve is drawn
// from as many points as the run's own (400, as the docs say); it was
// read in 1,024.
func TestStoredCurveHasTheRunsPoints(t *testing.T) {
	m := newTestModel(t, 160, 48)
	store := curveStore{rep: passedReport(testJob), n: 20160}
	m.opts.Store = store
	m.loading = testJob
	m.jobLoaded(loadJob(context.Background(), store, testJob, 100))
	m.showInSlot(paneResults)
	if s := screen(m); !strings.Contains(s, "equity curve (400 points)") {
		t.Errorf("a stored job's curve is not drawn from 400 points:\n%s", s)
	}
}

// TestResultsMarkAShortSpan: a run whose annualised figures come from a
// week says so above the metrics, and marks them ~ (the header's sharpe
// too); one of a year says its span below, unmarked.
func TestResultsMarkAShortSpan(t *testing.T) {
	m := newTestModel(t, 160, 48)
	startRun(m, newFakeRun(testJob, 0))
	rep := passedReport(testJob)
	rep.Metrics.SpanS, rep.Metrics.Sharpe = 604740, 19.76
	feed(m, job.Finished{JobID: testJob, Report: rep})
	m.showInSlot(paneResults)
	s := screen(m)
	for _, want := range []string{"~ sharpe, cagr, calmar, sortino and volatility extrapolate 6d 23h of", "under 90 days, too short", "sharpe 19.76 ~", "19.76 ~"} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q on the screen:\n%s", want, s)
		}
	}
	closeRun(m)
	startRun(m, newFakeRun("20261201-120100.000-0002", 0))
	rep = passedReport("20261201-120100.000-0002")
	rep.Metrics.SpanS = 400 * 86400
	feed(m, job.Finished{JobID: rep.JobID, Report: rep})
	m.showInSlot(paneResults)
	m.setFocus(paneResults)
	for range 30 {
		m.Update(press("j"))
	}
	if s := screen(m); strings.Contains(s, " ~") || !strings.Contains(s, "extrapolate 400 days of") {
		t.Errorf("a year's figures are marked, or their span unsaid:\n%s", s)
	}
}
