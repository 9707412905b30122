package workbench

import (
	"strings"
	"testing"

	"stratbench/job"
	"stratbench/themes"
)

// The process pane says which tree tracking is in force, live and for a
// finished job, and says nothing when it is not known (an older job).
func TestProcsPaneTracking(t *testing.T) {
	has := func(p *procsPane, want string) bool {
		return strings.Contains(strings.Join(p.lines(themes.Plain()), "\n"), want)
	}
	p := newProcsPane()
	p.SetSize(100, 20)
	if has(p, "tracking") {
		t.Error("a tracking line before anything is known")
	}
	p.apply(job.ResourceSample{Processes: 1, TreeTracking: "pidns"})
	if !has(p, "tracking   pidns · the tree is a PID namespace of its own") {
		t.Errorf("live pane without the pidns line:\n%s", strings.Join(p.lines(themes.Plain()), "\n"))
	}
	p.final(job.Resources{PeakProcesses: 1, TreeTracking: "fallback"})
	if !has(p, "tracking   fallback · PID namespaces refused here") {
		t.Errorf("finished pane without the fallback line:\n%s", strings.Join(p.lines(themes.Plain()), "\n"))
	}
}
