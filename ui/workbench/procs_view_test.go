package workbench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"stratbench/job"
	"stratbench/themes"
)

// barOf returns the gauge bar of the line starting with label.
func barOf(t *testing.T, view, label string) string {
	t.Helper()
	for _, l := range strings.Split(ansi.Strip(view), "\n") {
		if strings.HasPrefix(l, label) {
			return strings.TrimRight(strings.Fields(l)[1], " ")
		}
	}
	t.Fatalf("no %s gauge in:\n%s", label, view)
	return ""
}

// TestGaugesKeepTheirWidth: the bars do not change width as the values
// (and so their labels) grow; a finished job says its peak, not "—".
func TestGaugesKeepTheirWidth(t *testing.T) {
	p := newProcsPane()
	p.SetSize(58, 12)
	widths := map[int]bool{}
	for _, mem := range []int64{3 << 20, 90 << 20, 1500 << 20, 2100 << 20} {
		p.apply(job.ResourceSample{MemoryBytes: mem, PeakMemoryBytes: mem, Processes: 3, PeakProcesses: 30})
		widths[len([]rune(barOf(t, p.View(themes.Plain()), "memory")))] = true
	}
	if len(widths) != 1 {
		t.Fatalf("the memory bar took widths %v as its value grew", widths)
	}
	p.final(job.Resources{PeakMemoryBytes: 2100 << 20, PeakProcesses: 30})
	view := p.View(themes.Plain())
	if strings.Contains(view, "—") || !strings.Contains(view, "peak 2.05 GiB / 2.00 GiB") {
		t.Fatalf("finished:\n%s", view)
	}
}

// TestProcsScrollKeepsGauges: scrolling a long process list moves the list
// only; the gauges stay on screen.
func TestProcsScrollKeepsGauges(t *testing.T) {
	p := newProcsPane()
	p.SetSize(80, 10)
	var procs []job.Proc
	for i := range 30 {
		procs = append(procs, job.Proc{PID: 100 + i, PPID: 100, RSSBytes: 1 << 20, Command: fmt.Sprintf("sleep %d", i)})
	}
	p.apply(job.ResourceSample{Processes: 30, PeakProcesses: 30, Procs: procs})
	km := newKeyMap()
	for range 12 {
		p.Update(press("j"), km)
	}
	view := p.View(themes.Plain())
	if !strings.HasPrefix(view, "memory") || !strings.Contains(view, "processes") || strings.Contains(view, "sleep 0\n") {
		t.Fatalf("after scrolling:\n%s", view)
	}
	if !strings.Contains(view, "sleep 15") || !strings.Contains(view, "more (j/↓") {
		t.Fatalf("the list did not scroll:\n%s", view)
	}
}
