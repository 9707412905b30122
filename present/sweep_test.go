package present

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"stratbench/contract"
	"stratbench/sweep"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestSweepTextOfAWalkForward: the summary names the folds, the stitched
// return and the efficiency.
func TestSweepTextOfAWalkForward(t *testing.T) {
	doc := walkForwardDoc(t)
	text := SweepText(&doc, 10, "")
	for _, want := range []string{"✓ PASSED  sweep " + doc.SweepID, "runs      25 of 25 done", "walk-forward folds",
		"01-11→01-12", "out of sample  5 folds stitched", "efficiency     ",
		"best      (fold 4 train, the in-sample best of the latest fold) #"} {
		if !strings.Contains(text, want) {
			t.Fatalf("no %q in:\n%s", want, text)
		}
	}
	// The fold is the best run's: a best of fold 3 (fold 4 still running)
	// says it is not the last fold's.
	for _, r := range doc.Runs {
		if r.Fold != nil && *r.Fold == 3 && r.Phase == sweep.PhaseTrain {
			doc.Best.JobID = r.JobID
			break
		}
	}
	if text := SweepText(&doc, 10, ""); !strings.Contains(text, "(fold 3 train, the in-sample best of the latest fold with one) #") {
		t.Fatalf("a best of fold 3:\n%s", text)
	}
	// sweeps says it too; without the runs, from the folds' best params.
	doc.Runs = nil
	if text := SweepsText([]*sweep.Document{&doc}, time.UTC); !strings.Contains(text, "fold 4 train: "+doc.Best.Params.String()) {
		t.Fatalf("sweeps:\n%s", text)
	}
	doc.WalkForward = nil
	if text := SweepText(&doc, 10, "") + SweepsText([]*sweep.Document{&doc}, time.UTC); strings.Contains(text, "fold ") {
		t.Fatalf("a plain sweep's best names a fold:\n%s", text)
	}
}

// TestResultLinesAlign: in the text output's run lines, the metric column
// starts at the same place for a passed run and for a run failed of any
// kind, and the params at the same place, two spaces at least after the
// widest value.
func TestResultLinesAlign(t *testing.T) {
	column := func(line, of string) int {
		i := strings.Index(line, of)
		if i < 0 {
			t.Fatalf("no %q in %q", of, line)
		}
		return utf8.RuneCountInString(line[:i])
	}
	cols := runColumns{metric: "sharpe", whereW: 3}
	passed := resultLine(sweep.Result{Index: 3, Status: sweep.RunPassed, JobID: "j"}, cols)
	want := column(passed, " sharpe ")
	for _, kind := range []contract.FailureKind{contract.KindTimeout, contract.KindMemory, contract.KindProcesses,
		contract.KindProtocol, contract.KindException, contract.KindCrash, contract.KindData} {
		failed := resultLine(sweep.Result{Index: 3, Status: sweep.RunFailed, FailureKind: string(kind), JobID: "j"}, cols)
		if got := column(failed, " sharpe "); got != want {
			t.Errorf("the metric of a run failed (%s) starts at %d, of a passed run at %d:\n%s\n%s", kind, got, want, passed, failed)
		}
	}
	cols = runColumns{metric: "total_return", whereW: 3}
	params := sweep.Params{{Name: "fast", Value: int64(5)}}
	wantParams := -1
	for _, v := range []float64{-0.0005124, 0.01183, -1.257e-05, 3} {
		line := resultLine(sweep.Result{Index: 3, Status: sweep.RunPassed, Params: params,
			Metrics: []byte(fmt.Sprintf(`{"total_return": %g}`, v)), JobID: "j"}, cols)
		got := column(line, "fast=5")
		if wantParams < 0 {
			wantParams = got
		}
		if got != wantParams || !strings.Contains(line, metricText(v)+"  ") {
			t.Errorf("value %g: the params start at %d (want %d), or run into the value:\n%s", v, got, wantParams, line)
		}
	}
}

// TestResultLinesAlignInAWalkForward: a walk-forward's run lines, train and
// test, of one-digit and two-digit folds and indices, start their outcome
// at the same place.
func TestResultLinesAlignInAWalkForward(t *testing.T) {
	doc := walkForwardDoc(t)
	// More folds and indices than the recording has: wider numbers.
	ten, runs := 10, doc.Runs
	runs = append(runs, sweep.Result{Index: 12, Fold: &ten, Phase: sweep.PhaseTrain, Status: sweep.RunPassed})
	for range 6 {
		doc.WalkForward.Folds = append(doc.WalkForward.Folds, doc.WalkForward.Folds[0])
	}
	doc.Spec.Grid = append(doc.Spec.Grid, sweep.Axis{Name: "more", Values: []any{int64(1), int64(2), int64(3)}})
	cols := runColumnsOf(&doc)
	want, phases := -1, map[sweep.Phase]bool{}
	for k, r := range runs {
		line := resultLine(r, cols)
		// The recording's folds are of one digit: their indices line up
		// too, train or test.
		if hash := strings.Index(line, "#"); k < len(doc.Runs) && hash != strings.Index(resultLine(runs[0], cols), "#") {
			t.Errorf("the index is at %d, want %d:\n%s\n%s", hash, strings.Index(resultLine(runs[0], cols), "#"), resultLine(runs[0], cols), line)
		}
		i := strings.IndexAny(line, "✓✗")
		if i < 0 {
			t.Fatalf("no outcome in %q", line)
		}
		got := utf8.RuneCountInString(line[:i])
		if want < 0 {
			want = got
		}
		if got != want {
			t.Errorf("the outcome starts at %d, want %d:\n%s", got, want, line)
		}
		phases[r.Phase] = true
	}
	if !phases[sweep.PhaseTrain] || !phases["test"] {
		t.Fatalf("the recording lacks a phase: %v", phases)
	}
}

// TestSweepTextWording: counts take their noun's number, and a sweep where
// no run passed says so instead of a "top" of failed runs.
func TestSweepTextWording(t *testing.T) {
	failed := sweep.Result{Index: 0, Status: sweep.RunFailed, FailureKind: "exception", JobID: "j"}
	doc := &sweep.Document{SweepID: "sw-x", Status: sweep.StatusFailed, Spec: sweep.SpecDoc{Metric: "sharpe", Jobs: 1},
		Counts: sweep.Counts{Total: 1, Done: 1, Failed: 1}, Runs: []sweep.Result{failed}}
	text := SweepText(doc, 10, "")
	if strings.Contains(text, "top ") || !strings.Contains(text, "no run passed; the 1 run that failed\n") {
		t.Errorf("none passed:\n%s", text)
	}
	doc.Runs = []sweep.Result{failed, failed, failed}
	if text := SweepText(doc, 2, ""); !strings.Contains(text, "no run passed; 2 of the 3 that failed\n") {
		t.Errorf("none passed, more than the top:\n%s", text)
	}
	passed := sweep.Result{Index: 1, Status: sweep.RunPassed, JobID: "k"}
	doc.Runs, doc.Best = []sweep.Result{passed}, &sweep.Best{Index: 1, Metric: "sharpe"}
	if text := SweepText(doc, 10, ""); !strings.Contains(text, "top 1 of 1 run\n") {
		t.Errorf("one passed:\n%s", text)
	}
	var out bytes.Buffer
	p := NewSweepPrinter(SweepOutput{Format: "text", Stdout: &out}, doc, 1, 0)
	p.Begin()
	if !strings.Contains(out.String(), ": 1 run of ") || !strings.Contains(out.String(), " on 1 slot, ") {
		t.Errorf("begin: %q", out.String())
	}
}

// TestSweepsTextColumns: the sweep list's columns are as wide as their
// values, so a million runs do not run into the start time.
func TestSweepsTextColumns(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)
	docs := []*sweep.Document{
		{SweepID: "sw-20260105-093000.000-1a2b", Status: sweep.StatusRunning, Strategy: sweep.StrategyRef{Path: "big.py"},
			StartedAt: t0, Counts: sweep.Counts{Total: 1_000_000, Done: 0}},
		{SweepID: "sw-20260105-083000.000-3c4d", Status: sweep.StatusFailed, Strategy: sweep.StrategyRef{Path: "small.py"},
			StartedAt: t0, Counts: sweep.Counts{Total: 6, Done: 6, Failed: 12_345}},
	}
	lines := strings.Split(strings.TrimSuffix(SweepsText(docs, time.UTC), "\n"), "\n")
	if !strings.Contains(lines[1], "09:30  0/1,000,000  ") {
		t.Errorf("the runs run into the start time:\n%s", strings.Join(lines, "\n"))
	}
	end := func(line, of string) int {
		i := strings.Index(line, of)
		if i < 0 {
			t.Fatalf("no %q in %q", of, line)
		}
		return utf8.RuneCountInString(line[:i+len(of)])
	}
	if a, b, c := end(lines[0], "RUNS"), end(lines[1], "0/1,000,000"), end(lines[2], "6/6"); a != b || b != c {
		t.Errorf("RUNS ends at %d, its values at %d and %d:\n%s", a, b, c, strings.Join(lines, "\n"))
	}
	if a, b := end(lines[0], "FAILED"), end(lines[2], "12,345"); a != b {
		t.Errorf("FAILED ends at %d, its value at %d:\n%s", a, b, strings.Join(lines, "\n"))
	}
}

// TestFailureLine: a failed run's line in the text output says where it
// failed and the message's telling line, on one line of at most
// failureWidth runes (after the indent), safe for a terminal.
func TestFailureLine(t *testing.T) {
	long := strings.Repeat("é", 300)
	for _, tc := range []struct {
		f    contract.Failure
		want string
	}{
		{contract.Failure{Kind: contract.KindException, Hook: "on_data", Message: "ValueError: boom\nTraceback …"},
			"      exception in on_data: ValueError: boom"},
		{contract.Failure{Kind: contract.KindException, Hook: "on_start", Message: "  File \"s.py\", line 3\n    x = (\nSyntaxError: '(' was never closed\n"},
			"      exception in on_start: SyntaxError: '(' was never closed"},
		{contract.Failure{Kind: contract.KindTimeout, Hook: "on_data", Message: ""}, "      timeout in on_data"},
		{contract.Failure{Kind: contract.KindException, Hook: "on_data", Message: long},
			"      exception in on_data: " + long[:len("é")*(failureWidth-len("exception in on_data: ")-1)] + "…"},
	} {
		got := failureLine(&tc.f)
		if got != tc.want {
			t.Errorf("failureLine(%q) =\n%q, want\n%q", tc.f.Message, got, tc.want)
		}
		if n := utf8.RuneCountInString(strings.TrimLeft(got, " ")); n > failureWidth {
			t.Errorf("failureLine(%q) is %d runes long", tc.f.Message, n)
		}
	}
	got := failureLine(&contract.Failure{Kind: contract.KindException, Hook: "on_data", Message: "Error: \x1b[2Jgone\x07"})
	if strings.ContainsAny(got, "\x1b\x07\n") {
		t.Errorf("failureLine passes control characters: %q", got)
	}
}

// TestWalkForwardFoldsShowTheObjective: a walk-forward's folds show the
// in-sample value of the objective the best was picked by (sharpe) next to
// its return, and an empty efficiency says why; the folds showed only the
// return, and the summary a rule.
func TestWalkForwardFoldsShowTheObjective(t *testing.T) {
	doc := walkForwardDoc(t)
	wf := doc.WalkForward
	doc.Spec.Metric = "sharpe"
	for k := range wf.Folds {
		wf.Folds[k].InSample.Metric, wf.Folds[k].InSample.Value = "sharpe", 1.5+float64(k)
	}
	wf.Folds[1].InSample.Return = -0.0052
	wf.Efficiency = nil
	text := SweepText(&doc, 10, "")
	is := wf.Folds[0].InSample
	for _, want := range []string{"  IN SHARPE  IN RETURN  OUT RETURN\n", metricText(is.Value) + "     0.80 %      0.35 %\n",
		"efficiency     — (fold 1's in-sample return is -0.52 %, not above 0; it needs every fold's in-sample return above 0 and its test run)"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
}

// walkForwardDoc is the sweep view's recorded walk-forward (25 runs, 5
// folds), as sweep.json holds it.
func walkForwardDoc(t *testing.T) sweep.Document {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "ui", "sweepview", "testdata", "sweep", "walkforward", sweep.DocumentFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc sweep.Document
	if err := doc.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return doc
}
