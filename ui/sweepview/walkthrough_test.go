package sweepview

// Model tests of what the second walkthrough found in the sweep view: the folds' objective, a short span
// (issue 37).

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestSweepViewFoldsShowTheObjective: the walk-forward's folds show the
// in-sample value of the objective the best was picked by (sharpe), next
// to its return, and an empty efficiency says why once the sweep ended;
// the folds showed the return under "IN-SAMPLE" and the summary "—".
func TestSweepViewFoldsShowTheObjective(t *testing.T) {
	rec := loadSweep(t, "walkforward")
	doc := *rec.doc
	doc.Spec.Metric = "sharpe"
	wf := *doc.WalkForward
	wf.Folds = slices.Clone(wf.Folds)
	for k := range wf.Folds {
		in := *wf.Folds[k].InSample
		in.Metric, in.Value = "sharpe", 11.25+float64(k)
		wf.Folds[k].InSample = &in
	}
	wf.Folds[1].InSample.Return = -0.0052
	wf.Efficiency = nil
	doc.WalkForward = &wf
	ts := newTestSweep(t, rec, 160, 48)
	ts.feed(t, rec.results, &doc, true)
	screen := ansi.Strip(ts.m.View().Content)
	for _, want := range []string{"IN SHARPE  IN RETURN OUT RETURN", "11.25     0.80 %", "12.25    -0.52 %",
		"efficiency — (fold 1's in-sample return is -0.52 %, not above 0)"} {
		if !strings.Contains(screen, want) {
			t.Errorf("no %q on the screen:\n%s", want, screen)
		}
	}
}

// TestSweepViewMarksAShortSpan: a sweep ranked by Sharpe over a week of
// bars says so in its header and marks the runs' values ~.
func TestSweepViewMarksAShortSpan(t *testing.T) {
	rec := loadSweep(t, "grid")
	doc := *rec.doc
	doc.Spec.Metric = "sharpe"
	rec.doc = &doc
	results := slices.Clone(rec.results)
	for i := range results {
		if len(results[i].Metrics) > 0 {
			var m map[string]any
			if err := json.Unmarshal(results[i].Metrics, &m); err != nil {
				t.Fatal(err)
			}
			m["span_s"] = 604740
			results[i].Metrics, _ = json.Marshal(m)
		}
	}
	ts := newTestSweep(t, rec, 160, 48)
	ts.feed(t, results, &doc, true)
	screen := ansi.Strip(ts.m.View().Content)
	if !strings.Contains(screen, "max sharpe ~ from 6d 23h, too short to annualise") || !regexp.MustCompile(`✓ passed +[0-9.-]+~ `).MatchString(screen) {
		t.Errorf("the sweep view does not mark the short span:\n%s", screen)
	}
}
