package present

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"stratbench/internal/fixtures"
	"stratbench/job"
)

// The text outputs of recorded real jobs (internal/fixtures), against
// golden files (go test ./app -update rewrites them).

func TestReportText(t *testing.T) {
	for _, name := range []string{"passed", "demo", "failed-exception", "failed-timeout", "failed-memory", "failed-crash",
		"failed-syntax", "failed-processes", "hung", "passed-market"} {
		t.Run(name, func(t *testing.T) {
			rep := fixtures.Load(t, name).Report
			golden.RequireEqual(t, ReportText(rep))
		})
	}
}

// TestReportTextSaveErrors: what could not be saved is said last.
func TestReportTextSaveErrors(t *testing.T) {
	rep := fixtures.Load(t, "passed").Report
	rep.SaveErrors = []string{"write /home/ana/.local/state/stratbench/jobs/x/job.json: no space left on device"}
	if text := ReportText(rep); !strings.HasSuffix(text, "not saved    "+rep.SaveErrors[0]+"\n") {
		t.Fatalf("report ends:\n%s", text[max(0, len(text)-200):])
	}
}

// TestReportTextOfASweepRun: a sweep's run says which sweep and run it is
// (the JSON had it, the text did not), and how to see that sweep.
func TestReportTextOfASweepRun(t *testing.T) {
	rep := fixtures.Load(t, "passed").Report
	if strings.Contains(ReportText(rep), "\nsweep ") {
		t.Fatal("a job of no sweep has a sweep line")
	}
	fold := 2
	for _, tc := range []struct {
		tag  job.SweepTag
		want string
	}{
		{job.SweepTag{ID: "sw-20260105-093000.123-1a2b", Index: 3},
			"\nsweep        sw-20260105-093000.123-1a2b, run #3 (stratbench status sw-20260105-093000.123-1a2b)\n"},
		{job.SweepTag{ID: "sw-20260105-093000.123-1a2b", Index: 7, Fold: &fold, Phase: "train"},
			"\nsweep        sw-20260105-093000.123-1a2b, run fold 2 train #7 (stratbench status sw-20260105-093000.123-1a2b)\n"},
	} {
		rep.Sweep = &tc.tag
		if text := ReportText(rep); !strings.Contains(text, tc.want) {
			t.Errorf("%+v: want %q in\n%s", tc.tag, tc.want, text)
		}
	}
}

// TestReportJSONIsTheReport: --output json prints the report as job.json
// holds it, field for field.
func TestReportJSONIsTheReport(t *testing.T) {
	rep := fixtures.Load(t, "failed-exception").Report
	var out bytes.Buffer
	if err := WriteReport(&out, rep, "json"); err != nil {
		t.Fatal(err)
	}
	want, _ := json.MarshalIndent(rep, "", "  ")
	if out.String() != string(want)+"\n" {
		t.Fatalf("JSON output differs from the report's encoding")
	}
	var line bytes.Buffer
	if err := WriteReportLine(&line, rep); err != nil || strings.Count(line.String(), "\n") != 1 {
		t.Fatalf("report line: %v, %q", err, line.String())
	}
}

func TestJobsText(t *testing.T) {
	var reports []*job.Report
	for i, name := range []string{"failed-exception", "demo", "passed"} {
		r := fixtures.Load(t, name).Report
		r.StartedAt = fixtures.T0.Add(-time.Duration(i) * time.Hour)
		reports = append(reports, r)
	}
	running := fixtures.Load(t, "demo").ReportAs("20261201-130000.000-beef")
	running.Status, running.Metrics, running.Failure, running.FinishedAt = job.StatusRunning, nil, nil, nil
	reports = append([]*job.Report{running}, reports...)
	golden.RequireEqual(t, jobsText(reports, time.UTC, nil))
}

// TestJobsTextTellsRunsApart: the params that differ between the listed
// jobs come first (where a cut at the column's width spares them), and a
// strategy name that two folders have shows the folder; two strategy.py
// of different folders, run with different params, looked the same.
func TestJobsTextTellsRunsApart(t *testing.T) {
	var reports []*job.Report
	for i, tc := range []struct {
		path   string
		params map[string]any
	}{
		{"/home/ana/research/rsi/strategy.py", map[string]any{"alloc": 0.4, "lower": 30, "period": 14, "upper": 70, "zeta": "a-long-value-that-is-the-same"}},
		{"/home/ana/research/rsi/strategy.py", map[string]any{"alloc": 0.4, "lower": 30, "period": 14, "upper": 75, "zeta": "a-long-value-that-is-the-same"}},
		{"/home/ana/research/sma/strategy.py", map[string]any{"alloc": 0.4, "lower": 30, "period": 21, "upper": 70, "zeta": "a-long-value-that-is-the-same"}},
		{"/home/ana/research/other.py", nil},
	} {
		r := fixtures.Load(t, "passed").ReportAs(fmt.Sprintf("20261201-120000.000-%04d", i))
		r.StartedAt = fixtures.T0.Add(-time.Duration(i) * time.Hour)
		r.Strategy.Path, r.Strategy.Params = tc.path, tc.params
		reports = append(reports, r)
	}
	text := jobsText(reports, time.UTC, nil)
	for _, want := range []string{"rsi/strategy.py", "sma/strategy.py", " other.py ", "period=14 upper=70 alloc=0.4 lower=30 zeta=a-lo…"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	golden.RequireEqual(t, text)
}

// TestJobsTextOfASweep: a list with sweep runs says which run each job is
// (the index, and the fold and phase in a walk-forward) and its swept
// params, in grid order and cut to fit; jobs of their own show "—"; a
// sweep whose document is gone shows every param by name.
func TestJobsTextOfASweep(t *testing.T) {
	fold := 1
	var reports []*job.Report
	for i, tc := range []struct {
		name   string
		tag    *job.SweepTag
		params map[string]any
	}{
		{"passed", &job.SweepTag{ID: "sw-a", Index: 12}, map[string]any{"slow": 40, "fast": 5, "fixed": 1}},
		{"failed-exception", &job.SweepTag{ID: "sw-a", Index: 3}, map[string]any{"slow": 20, "fast": 10, "fixed": 1}},
		{"passed", &job.SweepTag{ID: "sw-wf", Index: 7, Fold: &fold, Phase: "train"},
			map[string]any{"fast": 5, "threshold": 0.125, "mode": "a-rather-long-mode-name-to-cut"}},
		{"passed", &job.SweepTag{ID: "sw-gone", Index: 0}, map[string]any{"b": true, "a": 2}},
		{"demo", nil, map[string]any{"fast": 5}},
	} {
		r := fixtures.Load(t, tc.name).Report
		r.StartedAt = fixtures.T0.Add(-time.Duration(i) * time.Hour)
		r.Sweep, r.Strategy.Params = tc.tag, tc.params
		reports = append(reports, r)
	}
	swept := map[string][]string{"sw-a": {"fast", "slow"}, "sw-wf": {"mode", "fast", "threshold"}}
	golden.RequireEqual(t, jobsText(reports, time.UTC, swept))
}

func TestDiffText(t *testing.T) {
	passed := fixtures.Load(t, "passed").Report
	failed := fixtures.Load(t, "failed-exception").Report
	t.Run("different", func(t *testing.T) { golden.RequireEqual(t, diffText(passed, failed)) })
	// Market settings and the window are inputs: a fingerprint that
	// differs has an input row that differs.
	t.Run("market", func(t *testing.T) {
		market := fixtures.Load(t, "passed-market").Report
		text := diffText(passed, market)
		for _, row := range []string{"≠ param fast", "≠ window", "≠ cash", "≠ fee bps", "≠ slippage bps", "≠ short selling", "≠ fingerprint"} {
			if !strings.Contains(text, row) {
				t.Errorf("no row %q in:\n%s", row, text)
			}
		}
		golden.RequireEqual(t, text)
	})
	t.Run("same", func(t *testing.T) {
		again := *passed
		again.JobID = "20261201-130000.000-0002"
		text := diffText(passed, &again)
		if !strings.Contains(text, "same inputs, same orders and fills") || strings.Contains(text, "≠") {
			t.Fatalf("the same job twice:\n%s", text)
		}
	})
	t.Run("not deterministic", func(t *testing.T) {
		other := *passed
		other.OrdersHash = "0000"
		if text := diffText(passed, &other); !strings.Contains(text, "the strategy is not deterministic") {
			t.Fatalf("same inputs, other orders:\n%s", text)
		}
	})
}

func TestLogLineText(t *testing.T) {
	var out bytes.Buffer
	l := job.LogLine{Time: fixtures.T0.Add(1500 * time.Millisecond), Stream: "stderr", Line: "warn\x1b[2J\tx"}
	if err := WriteLogLine(&out, l, "text", time.UTC); err != nil {
		t.Fatal(err)
	}
	if want := "12:00:01.500 stderr warn    x\n"; out.String() != want {
		t.Fatalf("log line %q, want %q (escape sequences out, tabs expanded)", out.String(), want)
	}
}

func TestPrecheckText(t *testing.T) {
	rep := fixtures.Load(t, "passed").Report
	rec := &job.Precheck{Key: "k", Params: []string{"fast=5"}, Version: "0.1.0", JobID: rep.JobID,
		PassedAt: fixtures.T0, From: "2026-01-05T00:00:00Z", To: "2026-01-05T12:00:00Z"}
	var out bytes.Buffer
	WritePrecheck(&out, job.PrecheckResult{Status: job.PrecheckAlready, Record: rec}, "text")
	if !strings.HasPrefix(out.String(), "already checked: this script and params passed precheck 2026-01-05T00:00:00Z → 2026-01-05T12:00:00Z") {
		t.Fatalf("already checked: %q", out.String())
	}
	out.Reset()
	WritePrecheck(&out, job.PrecheckResult{Status: job.PrecheckPassed, Record: rec, Report: rep}, "text")
	if !strings.HasPrefix(out.String(), `precheck passed: recorded for this script, params ["fast=5"] and stratbench 0.1.0`) ||
		!strings.Contains(out.String(), "✓ PASSED") {
		t.Fatalf("passed:\n%s", out.String())
	}
}

// TestWatchLine: --ci --watch in text prints one line per run.
func TestWatchLine(t *testing.T) {
	for name, want := range map[string]string{
		"passed":           "✓ PASSED  job 20261201-120000.000-b070 · took 638ms · passed: 20,160 events · return 11.29 % · sharpe 19.76 (over 6d 23h: too short to annualise) · trades 351\n",
		"failed-exception": "✗ FAILED  job 20261201-120000.000-debf · took 71ms · exception in on_data: ZeroDivisionError: float division by zero (event #4 at 2026-01-05T00:02:00Z)\n",
	} {
		if got := WatchLine(fixtures.Load(t, name).Report); got != want {
			t.Errorf("%s:\n got %q\nwant %q", name, got, want)
		}
	}
}

// TestReportMetadataOneLine: metadata kept indented in job.json prints on
// one line.
func TestReportMetadataOneLine(t *testing.T) {
	rep := fixtures.Load(t, "passed").Report
	rep.Metadata = []byte("{\n  \"regime\": \"bull\",\n  \"n\": 3\n}")
	if text := ReportText(rep); !strings.Contains(text, "metadata     {\"regime\":\"bull\",\"n\":3}\n") {
		t.Fatalf("metadata:\n%s", text)
	}
}

// TestJobsJSONIsTheReports: `jobs --output json` writes the jobs' whole
// reports, as writeJSON writes them, although the listing holds only
// what it shows of each.
func TestJobsJSONIsTheReports(t *testing.T) {
	store, err := job.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var want []*job.Report
	for _, name := range []string{"failed-exception", "passed"} {
		rep := fixtures.Load(t, name).ReportAs(fixtures.ID(name))
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(store.JobDir(rep.JobID), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(store.JobDir(rep.JobID), "job.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	listed, err := store.List()
	if err != nil || len(listed) != 2 {
		t.Fatalf("list: %d, %v", len(listed), err)
	}
	for _, l := range listed {
		if l.Failure != nil && l.Failure.Traceback != "" {
			t.Errorf("the listing holds %s's traceback", l.JobID)
		}
		rep, err := store.Load(l.JobID)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, rep)
	}
	var got, wantJSON bytes.Buffer
	if err := writeReportsJSON(&got, store.Load, listed); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&wantJSON, want); err != nil {
		t.Fatal(err)
	}
	if got.String() != wantJSON.String() {
		t.Errorf("jobs --output json:\n%s\nwant\n%s", got.String(), wantJSON.String())
	}
	got.Reset()
	if err := writeReportsJSON(&got, store.Load, nil); err != nil || got.String() != "[]\n" {
		t.Errorf("no jobs: %q, %v", got.String(), err)
	}
}
