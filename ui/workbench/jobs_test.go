package workbench

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"stratbench/internal/fixtures"
	"stratbench/job"
	"stratbench/themes"
)

// reportsNewestFirst returns n passed reports, ids from first+n-1 down to first.
func reportsNewestFirst(first, n int) []*job.Report {
	var out []*job.Report
	for i := first + n - 1; i >= first; i-- {
		out = append(out, &job.Report{JobID: fmt.Sprintf("20261201-1200%02d.000-%04d", i, i), Status: job.StatusPassed,
			StartedAt: fixtures.T0.Add(time.Duration(i) * time.Second)})
	}
	return out
}

// TestJobsHeadStaysInView: with the selection on the first row, new jobs
// arriving keep the view at the head (the newest, running job is seen);
// with the selection further down, it stays on its job and its rows.
func TestJobsHeadStaysInView(t *testing.T) {
	p := newJobsPane()
	p.loc = time.UTC
	p.SetSize(100, 4) // a header and three rows
	p.setJobs(reportsNewestFirst(0, 10), nil)
	p.View(themes.Plain())
	for batch := 1; batch <= 3; batch++ {
		p.setJobs(reportsNewestFirst(0, 10+batch), nil)
		view := p.View(themes.Plain())
		newest := fmt.Sprintf("%04d", 10+batch-1)
		rows := strings.Split(view, "\n")
		if !strings.Contains(rows[1], newest) || p.selected != p.reports[0].JobID {
			t.Fatalf("after %d new jobs the first row is %q, selected %s; want the newest job %s, selected:\n%s", batch, rows[1], p.selected, newest, view)
		}
	}
	// The user moved down to look at an older job: new jobs do not move
	// the selection off it, nor the rows around it.
	p.Update(press("j"), newKeyMap())
	p.Update(press("j"), newKeyMap())
	before := p.View(themes.Plain())
	selected := p.selected
	p.setJobs(reportsNewestFirst(0, 14), nil)
	if after := p.View(themes.Plain()); p.selected != selected || after != before {
		t.Fatalf("selection %s → %s, view\n%s\n→\n%s", selected, p.selected, before, after)
	}
}

// TestJobsStartupFailureHasNoReturn: a job that failed before its first
// event shows no return (not 0.00 %), and every row names its strategy.
func TestJobsStartupFailureHasNoReturn(t *testing.T) {
	p := newJobsPane()
	p.loc = time.UTC
	p.SetSize(120, 5)
	syntax := fixtures.Load(t, "failed-syntax").Report
	passed := fixtures.Load(t, "passed").Report
	syntax.Strategy.Path = "/home/ana/other/momentum.py"
	p.setJobs([]*job.Report{syntax, passed}, nil)
	rows := strings.Split(p.View(themes.Plain()), "\n")
	if !strings.Contains(rows[1], "momentum.py") || strings.Contains(rows[1], "%") || !strings.Contains(rows[1], "—") {
		t.Errorf("startup failure row %q: want its strategy and no return", rows[1])
	}
	if !strings.Contains(rows[2], "strategy.py") || !strings.Contains(rows[2], "11.29 %") {
		t.Errorf("passed row %q", rows[2])
	}
}

// TestJobsShowParamsAndFolders: each job's params are on its row, those
// that differ between the listed jobs first, and two strategy.py of
// different folders are told apart by their folders; the pane showed
// neither.
func TestJobsShowParamsAndFolders(t *testing.T) {
	p := newJobsPane()
	p.loc = time.UTC
	p.SetSize(160, 4)
	var reports []*job.Report
	for i, tc := range []struct {
		path  string
		upper int
	}{{"/home/ana/momentum/strategy.py", 75}, {"/home/ana/momentum/strategy.py", 70}, {"/home/ana/meanrev/strategy.py", 70}} {
		r := fixtures.Load(t, "passed").ReportAs(fmt.Sprintf("20261201-120000.000-%04d", i))
		r.Strategy.Path = tc.path
		r.Strategy.Params = map[string]any{"alloc": 0.4, "lower": 30, "period": 14, "upper": tc.upper}
		reports = append(reports, r)
	}
	p.setJobs(reports, nil)
	rows := strings.Split(p.View(themes.Plain()), "\n")
	if !strings.Contains(rows[0], "PARAMS") {
		t.Errorf("no PARAMS column: %q", rows[0])
	}
	for i, want := range []string{"momentum/strategy.py", "momentum/strategy.py", "meanrev/strategy.py"} {
		params := []string{"upper=75 alloc=0.4", "upper=70 alloc=0.4", "upper=70 alloc=0.4"}[i]
		if !strings.Contains(rows[i+1], want) || !strings.Contains(rows[i+1], params) {
			t.Errorf("row %d %q: want %s and %s", i+1, rows[i+1], want, params)
		}
	}
}

// TestResultsSayMoreBelow: the metrics below the chart are announced, and
// formatted in their units when scrolled to.
func TestResultsSayMoreBelow(t *testing.T) {
	m := newTestModel(t, 120, 40)
	live(t, m, "passed", true)
	m.setFocus(paneResults)
	if s := screen(m); !strings.Contains(s, "more (j/↓ scrolls)") {
		t.Fatalf("no hint of the metrics below the chart:\n%s", s)
	}
	m.Update(press("G"))
	s := screen(m)
	if !strings.Contains(s, "warmup_bars") || !strings.Contains(s, "1d 14h") || !strings.Contains(s, "above (k/↑)") {
		t.Fatalf("at the bottom:\n%s", s)
	}
	if strings.Contains(s, "0.0") && !strings.Contains(s, "%") {
		t.Fatalf("raw values:\n%s", s)
	}
}

// TestHeaderNamesTheInputs: the header says what a job runs on: the data,
// the window, the params and the market settings that are not the defaults.
func TestHeaderNamesTheInputs(t *testing.T) {
	m := newTestModel(t, 260, 40) // wide enough for all of it; narrower, the line is cut
	live(t, m, "passed-market", true)
	s := screen(m)
	for _, want := range []string{"data bundled:synthetic", "2026-01-06T00:00:00Z → 2026-01-08T00:00:00Z", "allocation=0.45 fast=5 slow=30",
		"cash 50,000.00", "fees 2.50 bps", "slippage 1.00 bps", "short selling on"} {
		if !strings.Contains(strings.SplitN(s, "\n", 3)[1], want) {
			t.Errorf("the header's second line lacks %q:\n%s", want, strings.SplitN(s, "\n", 3)[1])
		}
	}
}

// TestJobsLeaveOutSweepRuns: the jobs pane lists the jobs of the edit-save
// loop, not the runs of sweeps stored beside them (as `stratbench jobs`
// without --all); the selection stays on the same job across a listing
// that adds sweep runs above it.
func TestJobsLeaveOutSweepRuns(t *testing.T) {
	p := newJobsPane()
	p.loc = time.UTC
	p.SetSize(120, 20)
	mixed := reportsNewestFirst(0, 12)
	for i, r := range mixed {
		if i%3 != 0 { // ids 0010, 0009, 0007, 0006, … are sweep runs
			r.Sweep = &job.SweepTag{ID: "sw-20261201-120000", Index: int64(i)}
		}
	}
	p.setJobs(mixed, nil)
	view := p.View(themes.Plain())
	for i, r := range mixed {
		suffix := r.JobID[len(r.JobID)-4:]
		if shown := strings.Contains(view, suffix); shown != (i%3 == 0) {
			t.Errorf("job %s (sweep run: %v) shown: %v:\n%s", r.JobID, r.Sweep != nil, shown, view)
		}
	}
	if len(p.reports) != 4 {
		t.Fatalf("the pane holds %d jobs, want the 4 of their own", len(p.reports))
	}
	p.Update(press("j"), newKeyMap())
	selected := p.selected
	more := append(reportsNewestFirst(12, 3), mixed...)
	for _, r := range more[:3] {
		r.Sweep = &job.SweepTag{ID: "sw-20261201-120500"}
	}
	p.setJobs(more, nil)
	if p.selected != selected || len(p.reports) != 4 {
		t.Fatalf("after sweep runs arrived the selection is %s (was %s), %d jobs listed", p.selected, selected, len(p.reports))
	}
}
