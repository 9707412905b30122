package app

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stratbench/sweep"
)

// TestWalkForwardFoldsShowTheObjective: a walk-forward's folds show the
// in-sample value of the objective the best was picked by (sharpe) next to
// its return, and an empty efficiency says why; the folds showed only the
// return, and the summary a rule.
func TestWalkForwardFoldsShowTheObjective(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "ui", "sweepview", "testdata", "sweep", "walkforward", sweep.DocumentFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc sweep.Document
	if err := doc.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	wf := doc.WalkForward
	doc.Spec.Metric = "sharpe"
	for k := range wf.Folds {
		wf.Folds[k].InSample.Metric, wf.Folds[k].InSample.Value = "sharpe", 1.5+float64(k)
	}
	wf.Folds[1].InSample.Return = -0.0052
	wf.Efficiency = nil
	text := sweepText(&doc, 10, resumeCommand(nil, doc.SweepID))
	is := wf.Folds[0].InSample
	for _, want := range []string{"  IN SHARPE  IN RETURN  OUT RETURN\n", metricText(is.Value) + "     0.80 %      0.35 %\n",
		"efficiency     — (fold 1's in-sample return is -0.52 %, not above 0; it needs every fold's in-sample return above 0 and its test run)"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
}

// TestMissingStrategyAsks: a STRATEGY that is not there is said so, with
// the nearest .py file of its folder; at a terminal the answer opens that
// file (the default), waits for the one asked for (c), or quits, exit 2;
// elsewhere it is exit 2 at once. The workbench waited for the file,
// whatever its name.
func TestMissingStrategyAsks(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rsi.py"), []byte("def on_data(ctx, h): pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "rsii.py")
	_, statErr := os.Stat(missing)
	for _, tc := range []struct {
		answer string
		want   string // the path opened; "" for a refusal
	}{
		{"\n", filepath.Join(dir, "rsi.py")},
		{"o\n", filepath.Join(dir, "rsi.py")},
		{"c\n", missing},
		{"q\n", ""},
		{"", filepath.Join(dir, "rsi.py")}, // end of input: the default
	} {
		var out strings.Builder
		got, err := missingStrategy(missing, statErr, true, strings.NewReader(tc.answer), &out)
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("answer %q: %q, %v; want %q", tc.answer, got, err, tc.want)
		}
		if !strings.Contains(out.String(), "No strategy "+missing+" here. Open "+filepath.Join(dir, "rsi.py")+" instead [o]") {
			t.Errorf("the question: %q", out.String())
		}
		if err != nil && !strings.Contains(err.Error(), "rsii.py: no such file; did you mean "+filepath.Join(dir, "rsi.py")+"?") {
			t.Errorf("the refusal: %v", err)
		}
	}
	if _, err := missingStrategy(missing, statErr, false, strings.NewReader("o\n"), io.Discard); err == nil {
		t.Error("without a terminal to answer on, a missing strategy opened")
	}
	// A folder without a .py file: create it, or quit (the default).
	empty := filepath.Join(t.TempDir(), "new.py")
	_, statErr = os.Stat(empty)
	var out strings.Builder
	if got, err := missingStrategy(empty, statErr, true, strings.NewReader("\n"), &out); err == nil || got != "" ||
		!strings.Contains(out.String(), "Create it and wait for its first save [c], or quit [q]? [c/Q]") {
		t.Errorf("an empty folder's default: %q, %v, %q", got, err, out.String())
	}
	if got, err := missingStrategy(empty, statErr, true, strings.NewReader("c\n"), io.Discard); err != nil || got != empty {
		t.Errorf("c in an empty folder: %q, %v", got, err)
	}
}
