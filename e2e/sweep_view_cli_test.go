package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSweepViewCommand: `sweep view ID` is a command beside `sweep
// STRATEGY` (cobra tells them apart); without a terminal it refuses and
// says what prints a sweep instead, an id that names no sweep is bad
// input, and the resume of a finished sweep, which runs nothing, points
// at the view.
func TestSweepViewCommand(t *testing.T) {
	e := newEnv(t)
	r := e.run("sweep", sweepStrategy, "--ci", "--output", "json", "--jobs", "1", "--from", "2026-01-05", "--to", "2026-01-05 01:00:00",
		"--grid", "fast=3,4")
	var doc struct {
		SweepID string `json:"sweep_id"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &doc) != nil {
		t.Fatalf("sweep: exit %d\n%s", r.code, r.stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "view", doc.SweepID}, "the sweep view needs a terminal: `stratbench status SWEEP_ID` prints a sweep"},
		{[]string{"sweep", "view", doc.SweepID[:12]}, "the sweep view needs a terminal"}, // a prefix
		{[]string{"sweep", "view"}, "the sweep view needs a terminal"},
		{[]string{"sweep", "view", "sw-20000101"}, `unknown sweep "sw-20000101"`},
		{[]string{"sweep", "view", "nonsense"}, `unknown sweep "nonsense"`},
		{[]string{"sweep", "view", doc.SweepID, "--theme", "solarized"}, `unknown theme "solarized"`},
	} {
		r := e.run(c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, want 2 saying %q\n%s", strings.Join(c.args, " "), r.code, c.want, r.stderr)
		}
	}
	r = e.run("sweep", "--resume", doc.SweepID, "--ci")
	if want := "`stratbench sweep view " + doc.SweepID + "` opens it in the sweep view"; r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Fatalf("the resume of a finished sweep: exit %d, want it to say %q\n%s", r.code, want, r.stderr)
	}
}
