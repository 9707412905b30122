package ui

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"stratbench/contract"
	"stratbench/engine"
	"stratbench/themes"
	"stratbench/watch"
)

// paneState puts a fresh model into one state of the workbench.
type paneState struct {
	name  string
	setup func(t *testing.T, m *model)
}

const testJob = "20261201-120000.000-a1b2"

func paneStates() []paneState {
	failed := func(kind contract.FailureKind) paneState {
		return paneState{"failed-" + string(kind), func(t *testing.T, m *model) {
			r := newFakeRun(testJob, 0)
			startRun(m, r)
			feed(m, runningEvents(testJob)...)
			feed(m, engine.Finished{JobID: testJob, Report: failedReport(testJob, kind), Equity: equityCurve(200)})
			closeRun(m)
		}}
	}
	return []paneState{
		{"idle", func(t *testing.T, m *model) {}},
		{"waiting", func(t *testing.T, m *model) { m.fileMissing = true }},
		{"starting", func(t *testing.T, m *model) { m.requestRun() }},
		{"running", func(t *testing.T, m *model) {
			startRun(m, newFakeRun(testJob, 0))
			feed(m, runningEvents(testJob)...)
		}},
		{"running-hooks", func(t *testing.T, m *model) {
			startRun(m, newFakeRun(testJob, 0))
			feed(m, runningEvents(testJob)...)
			m.setFocus(paneHooks)
		}},
		{"running-procs", func(t *testing.T, m *model) {
			startRun(m, newFakeRun(testJob, 0))
			feed(m, runningEvents(testJob)...)
			m.setFocus(paneProcs)
		}},
		{"stopping", func(t *testing.T, m *model) {
			startRun(m, newFakeRun(testJob, 0))
			feed(m, runningEvents(testJob)...)
			m.Update(press("s"))
		}},
		{"passed", func(t *testing.T, m *model) {
			startRun(m, newFakeRun(testJob, 0))
			feed(m, runningEvents(testJob)...)
			feed(m, engine.Finished{JobID: testJob, Report: passedReport(testJob), Equity: equityCurve(500)})
			closeRun(m)
		}},
		{"stopped", func(t *testing.T, m *model) {
			startRun(m, newFakeRun(testJob, 0))
			feed(m, runningEvents(testJob)...)
			m.Update(press("s"))
			rep := passedReport(testJob)
			rep.Status = engine.StatusStopped
			feed(m, engine.Finished{JobID: testJob, Report: rep, Equity: equityCurve(120)})
			closeRun(m)
		}},
		failed(contract.KindTimeout),
		failed(contract.KindMemory),
		failed(contract.KindProcesses),
		failed(contract.KindProtocol),
		failed(contract.KindException),
		failed(contract.KindCrash),
		{"start-error", func(t *testing.T, m *model) {
			m.requestRun()
			m.Update(runStartedMsg{gen: m.gen, err: &engine.UsageError{Err: errors.New("--param fast: the manifest declares no such param (params: slow, size)")}})
		}},
		{"logs-truncated", func(t *testing.T, m *model) {
			startRun(m, newFakeRun(testJob, 0))
			feed(m, runningEvents(testJob)...)
			lines := []engine.LogLine{{Time: t0, Stream: "system", Line: "output truncated at 64 MiB: further output is discarded"}}
			for i := range 5 {
				lines = append(lines, engine.LogLine{Time: t0, Stream: "stdout", Line: fmt.Sprintf("late line %d", i)})
			}
			feed(m, engine.LogLines{JobID: testJob, Lines: lines, Dropped: 1234})
		}},
		{"logs-search", func(t *testing.T, m *model) {
			startRun(m, newFakeRun(testJob, 0))
			feed(m, runningEvents(testJob)...)
			m.Update(press("/"))
			typeKeys(m, "close=103")
			m.Update(press("enter"))
			m.Update(press("n"))
		}},
		{"jobs", func(t *testing.T, m *model) {
			withJobs(t, m)
			m.Update(press("6"))
		}},
		{"stored-job", func(t *testing.T, m *model) {
			withJobs(t, m)
			m.Update(press("6"))
			m.Update(press("G"))
			openSelected(t, m)
		}},
		{"stored-job-stopped", func(t *testing.T, m *model) {
			withJobs(t, m)
			m.Update(press("6"))
			m.Update(press("j"))
			openSelected(t, m)
		}},
		{"stored-job-logs", func(t *testing.T, m *model) {
			withJobs(t, m)
			m.Update(press("6"))
			m.Update(press("j"))
			m.Update(press("j"))
			openSelected(t, m)
			m.Update(press("3"))
		}},
		{"watch-warning", func(t *testing.T, m *model) {
			m.opts.Changes = make(chan watch.Change)
			startRun(m, newFakeRun(testJob, 0))
			feed(m, runningEvents(testJob)...)
			m.Update(changeMsg{ok: true, change: watch.Change{Kind: watch.Warning,
				Err: errors.New("inotify watch limit reached, polling every 500ms instead (raise fs.inotify.max_user_watches)")}})
		}},
		{"help", func(t *testing.T, m *model) {
			startRun(m, newFakeRun(testJob, 0))
			feed(m, runningEvents(testJob)...)
			m.Update(press("?"))
		}},
	}
}

// withJobs gives m a job store holding three earlier jobs, makes a run of
// this session the live one, and lists the jobs.
func withJobs(t *testing.T, m *model) {
	t.Helper()
	store := newStore(t)
	m.opts.Store = store
	var logs []engine.LogLine
	for i := range 40 {
		logs = append(logs, engine.LogLine{Time: t0, Stream: "stdout", Line: fmt.Sprintf("stored line %d", i)})
	}
	logs = append(logs, engine.LogLine{Time: t0, Stream: "stderr", Line: "Traceback (most recent call last):"})
	older := func(r *engine.Report, h int) *engine.Report {
		r.StartedAt = t0.Add(-time.Duration(h) * time.Hour)
		return r
	}
	saveJob(t, store, older(passedReport("20261130-090000.000-0001"), 27), logs[:10], equityCurve(800))
	saveJob(t, store, older(failedReport("20261130-100000.000-0002", contract.KindException), 26), logs, nil)
	stopped := older(passedReport("20261130-110000.000-0003"), 25)
	stopped.Status = engine.StatusStopped
	saveJob(t, store, stopped, nil, nil)
	running := passedReport(testJob)
	running.Status, running.Metrics, running.DurationMS = engine.StatusRunning, nil, 0
	saveJob(t, store, running, nil, nil)
	startRun(m, newFakeRun(testJob, 0))
	feed(m, runningEvents(testJob)...)
	m.Update(m.listJobs()())
}

// openSelected presses enter in the jobs pane and runs the commands that
// open the selected job.
func openSelected(t *testing.T, m *model) {
	t.Helper()
	_, cmd := m.Update(press("enter"))
	if cmd == nil {
		t.Fatal("enter on a job returned no command")
	}
	_, cmd = m.Update(cmd())
	if cmd == nil {
		t.Fatal("opening a job returned no command")
	}
	m.Update(cmd())
}

// goldenSizes are the sizes every state is checked at: a common wide
// terminal and the smallest supported one.
var goldenSizes = [][2]int{{120, 40}, {80, 24}}

// TestGoldenPanes renders every pane state at both sizes, without colour, and
// compares the screen with its golden file (go test -update rewrites them).
func TestGoldenPanes(t *testing.T) {
	for _, st := range paneStates() {
		for _, sz := range goldenSizes {
			t.Run(fmt.Sprintf("%s/%dx%d", st.name, sz[0], sz[1]), func(t *testing.T) {
				m := newTestModel(t, sz[0], sz[1])
				st.setup(t, m)
				out := m.View().Content
				checkScreen(t, out, sz[0], sz[1])
				checkNoColor(t, out)
				golden.RequireEqual(t, ansi.Strip(out))
			})
		}
	}
}

// TestGoldenColour pins the dark theme's rendering of a running job, escape
// codes and all.
func TestGoldenColour(t *testing.T) {
	m := newTestModel(t, 120, 40)
	th, err := themes.Named("dark")
	if err != nil {
		t.Fatal(err)
	}
	m.theme = th
	startRun(m, newFakeRun(testJob, 0))
	feed(m, runningEvents(testJob)...)
	out := m.View().Content
	checkScreen(t, out, 120, 40)
	if !strings.Contains(out, "\x1b[") {
		t.Fatal("the dark theme rendered no escape codes")
	}
	golden.RequireEqual(t, out)
}

// TestNarrowAndTiny checks layouts below the tabbed minimum and odd sizes:
// every line exactly as wide as the terminal, never more lines than it has.
func TestNarrowAndTiny(t *testing.T) {
	for _, sz := range [][2]int{{1, 1}, {10, 3}, {29, 30}, {30, 8}, {60, 16}, {99, 29}, {100, 30}, {100, 29}, {200, 60}, {400, 120}} {
		for _, st := range paneStates() {
			m := newTestModel(t, sz[0], sz[1])
			st.setup(t, m)
			checkScreen(t, m.View().Content, sz[0], sz[1])
		}
	}
	m := newTestModel(t, 20, 6)
	startRun(m, newFakeRun(testJob, 0))
	feed(m, runningEvents(testJob)...)
	golden.RequireEqual(t, screen(m))
}

// TestResizeKeepsState resizes a running job's screen back and forth: the
// state survives and the screen always fits.
func TestResizeKeepsState(t *testing.T) {
	m := newTestModel(t, 120, 40)
	startRun(m, newFakeRun(testJob, 0))
	feed(m, runningEvents(testJob)...)
	m.Update(press("k"))
	for _, sz := range [][2]int{{80, 24}, {30, 8}, {5, 2}, {200, 50}, {120, 40}} {
		send(m, teaSize(sz[0], sz[1]))
		checkScreen(t, m.View().Content, sz[0], sz[1])
	}
	if m.live.logs.follow {
		t.Error("resizing turned follow back on")
	}
	if !strings.Contains(screen(m), "RUNNING") {
		t.Error("the status word is gone after resizing")
	}
}

// checkScreen asserts that out is exactly h lines of exactly w cells.
func checkScreen(t *testing.T, out string, w, h int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	if len(lines) != h {
		t.Fatalf("%d×%d: got %d lines", w, h, len(lines))
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n != w {
			t.Fatalf("%d×%d: line %d is %d cells wide: %q", w, h, i, n, ansi.Strip(l))
		}
	}
}

var sgr = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// checkNoColor asserts that out sets no colour: only attributes such as bold
// and reverse, which NO_COLOR allows.
func checkNoColor(t *testing.T, out string) {
	t.Helper()
	for _, m := range sgr.FindAllStringSubmatch(out, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			var n int
			fmt.Sscan(p, &n)
			if (n >= 30 && n <= 49) || (n >= 90 && n <= 107) || n == 58 {
				t.Fatalf("colour parameter %d in %q", n, m[0])
			}
		}
	}
	if rest := sgr.ReplaceAllString(out, ""); strings.Contains(rest, "\x1b") {
		t.Fatal("escape sequence other than SGR in the view")
	}
}
