package app

import (
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
	data, err := os.ReadFile(filepath.Join("..", "ui", "testdata", "sweep", "walkforward", sweep.DocumentFile))
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
