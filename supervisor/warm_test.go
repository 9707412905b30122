package supervisor

import (
	"slices"
	"strings"
	"testing"
)

// linesWith returns the texts of the lines that start with prefix.
func linesWith(lines []Line, prefix string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l.Text, prefix) {
			out = append(out, l.Text)
		}
	}
	return out
}

// TestWarmRunsStartFresh: the template imports the third-party module the
// strategy's leading imports name, and neither the strategy nor a module
// of its folder; every run imports both itself, starting from the
// template's state of the third-party module (its token), which nothing a
// run does changes for the next (its count).
func TestWarmRunsStartFresh(t *testing.T) {
	h := newHost(t)
	strategy := script(t, "warm/fresh/strategy.py")
	tc := newCollector()
	tp := startTemplate(t, h, python(t), strategy, tc, warmEnv(t))
	if got := tp.Preloaded(); !slices.Contains(got, "countlib") || slices.Contains(got, "helper") {
		t.Errorf("the template preloaded %q, want countlib and not helper", got)
	}
	var tokens []string
	for run := range 3 {
		w := forkWorker(t, tp, strategy, warmEnv(t), Limits{})
		w.manifest(t)
		if res := w.quit(t); res.ExitCode != 0 || res.TreeTracking != TrackingPIDNamespace {
			t.Fatalf("run %d: %+v; output %v", run, res, w.c.snapshot())
		}
		lines := w.c.snapshot()
		counts := linesWith(lines, "count ")
		if len(counts) != 1 || !strings.HasPrefix(counts[0], "count 1 token ") {
			t.Fatalf("run %d printed %q, want one count 1", run, counts)
		}
		tokens = append(tokens, strings.Fields(counts[0])[3])
		if n := len(linesWith(lines, "strategy module executed")); n != 1 {
			t.Errorf("run %d executed the strategy's module %d times", run, n)
		}
		if n := len(linesWith(lines, "helper imported")); n != 1 {
			t.Errorf("run %d imported the folder's helper %d times", run, n)
		}
	}
	if len(slices.Compact(slices.Clone(tokens))) != 1 {
		t.Errorf("runs saw countlib tokens %q: not the template's one import", tokens)
	}
	for _, l := range tc.snapshot() {
		if strings.Contains(l.Text, "executed") || strings.Contains(l.Text, "helper") || strings.Contains(l.Text, "count") {
			t.Errorf("the template ran code of the strategy's folder: %q", l.Text)
		}
	}
	if s := <-tp.Process().Samples(); s.Processes != 1 {
		t.Errorf("the template's tree has %d processes after its runs, want 1: %+v", s.Processes, s.Procs)
	}
}
