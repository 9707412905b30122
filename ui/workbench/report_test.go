package workbench

import (
	"context"
	"strings"
	"testing"

	"stratbench/job"
)

// TestReportKey: o writes the HTML report of the job in view through
// Options.Report, once the job has ended, and opens it (here, with no
// opener, the footer gives its path); while the job runs it says to wait.
func TestReportKey(t *testing.T) {
	m := newTestModel(t, 120, 40)
	var asked []string
	m.opts.Report = func(_ context.Context, id string) (string, error) {
		asked = append(asked, id)
		return "/home/ana/.local/state/stratbench/jobs/" + id + "/report.html", nil
	}
	startRun(m, newFakeRun(testJob, 0))
	if _, cmd := m.Update(press("o")); cmd != nil {
		t.Fatal("o while the job runs asked for its report")
	}
	if s := screen(m); !strings.Contains(s, "the report is written once the job has ended") {
		t.Errorf("o while the job runs does not say to wait:\n%s", s)
	}
	feed(m, job.Finished{JobID: testJob, Report: passedReport(testJob)})
	_, cmd := m.Update(press("o"))
	if cmd == nil {
		t.Fatal("o on a finished job asked for nothing")
	}
	m.Update(cmd())
	if len(asked) != 1 || asked[0] != testJob {
		t.Fatalf("Options.Report was asked for %v, want [%s]", asked, testJob)
	}
	if s := screen(m); !strings.Contains(s, "the report is /home/ana/.local/state/stratbench/jobs/") || !strings.Contains(s, "/report.html") {
		t.Errorf("without an opener the footer does not give the report's path:\n%s", s)
	}
}

// TestReportKeyOneAtATime: o pressed again while the report is being
// written (a held key repeats it) writes it once: each press would load
// the job's records again, all at once, and then open the report once per
// press (a browser tab each). Once written, o writes it again.
func TestReportKeyOneAtATime(t *testing.T) {
	m := newTestModel(t, 120, 40)
	m.opts.Report = func(_ context.Context, id string) (string, error) {
		return "/home/ana/.local/state/stratbench/jobs/" + id + "/report.html", nil
	}
	startRun(m, newFakeRun(testJob, 0))
	feed(m, job.Finished{JobID: testJob, Report: passedReport(testJob)})
	_, first := m.Update(press("o"))
	if first == nil {
		t.Fatal("o on a finished job asked for nothing")
	}
	for range 3 {
		if _, cmd := m.Update(press("o")); cmd != nil {
			t.Fatal("o while the report is being written asked for it again")
		}
	}
	if s := screen(m); !strings.Contains(s, "being written") {
		t.Errorf("o while the report is being written does not say so:\n%s", s)
	}
	m.Update(first())
	if _, cmd := m.Update(press("o")); cmd == nil {
		t.Fatal("o after the report was written asked for nothing")
	}
}
