package sweepview

import (
	"context"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"stratbench/ui/internal/uitest"
)

// TestReportKey: o writes the sweep's HTML report through Options.Report,
// for the sweep in view, and opens it (here, with no opener, the footer
// gives its path).
func TestReportKey(t *testing.T) {
	rec, ts := endedSweep(t, "grid", 160, 48, nil)
	var asked []string
	ts.m.opts.Report = func(_ context.Context, id string) (string, error) {
		asked = append(asked, id)
		return "/home/ana/.local/state/stratbench/sweeps/" + id + "/report.html", nil
	}
	_, cmd := ts.m.Update(uitest.Press("o"))
	if cmd == nil {
		t.Fatal("o asked for nothing")
	}
	ts.m.Update(cmd())
	if len(asked) != 1 || asked[0] != rec.doc.SweepID {
		t.Fatalf("Options.Report was asked for %v, want [%s]", asked, rec.doc.SweepID)
	}
	if s := ansi.Strip(ts.m.View().Content); !strings.Contains(s, "the report is /home/ana/.local/state/stratbench/sweeps/") {
		t.Errorf("without an opener the footer does not give the report's path:\n%s", s)
	}
}

// TestReportKeyOneAtATime: o pressed again while the sweep's report is
// being written writes it once (as the workbench's o).
func TestReportKeyOneAtATime(t *testing.T) {
	rec := loadSweep(t, "grid")
	ts := newTestSweep(t, rec, 160, 48)
	ts.feed(t, rec.results, rec.doc, true)
	ts.m.opts.Report = func(_ context.Context, id string) (string, error) {
		return "/home/ana/.local/state/stratbench/sweeps/" + id + "/report.html", nil
	}
	_, first := ts.m.Update(uitest.Press("o"))
	if first == nil {
		t.Fatal("o asked for nothing")
	}
	for range 3 {
		if _, cmd := ts.m.Update(uitest.Press("o")); cmd != nil {
			t.Fatal("o while the report is being written asked for it again")
		}
	}
	if s := ansi.Strip(ts.m.View().Content); !strings.Contains(s, "being written") {
		t.Errorf("o while the report is being written does not say so:\n%s", s)
	}
	ts.m.Update(first())
	if _, cmd := ts.m.Update(uitest.Press("o")); cmd == nil {
		t.Fatal("o after the report was written asked for nothing")
	}
}
