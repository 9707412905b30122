package workbench

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"stratbench/contract"
	"stratbench/engine"
	"stratbench/internal/fixtures"
	"stratbench/job"
	"stratbench/themes"
	"stratbench/watch"
)

// paneState puts a fresh model into one state of the workbench.
type paneState struct {
	name  string
	setup func(t *testing.T, m *model)
}

const testJob = "20261201-120000.000-a1b2"

// The golden screens show what the engine really published while real
// strategies ran: the recordings of testdata/workbench (see
// internal/fixtures; go test ./app -run TestRecordWorkbenchFixtures -record
// makes them). "demo" is a run in flight, snapshotted at a quarter of its
// bars and then stopped; "passed" the example strategy; each "failed-KIND"
// a strategy of testdata/strategies that fails that way.

// live shows the recording name as the live run: its snapshot and, when
// finish is set, its final event and the end of its stream.
func live(t *testing.T, m *model, name string, finish bool) {
	rec := fixtures.Load(t, name)
	startRun(m, newFakeRun(testJob, 0))
	feed(m, rec.Events(testJob)...)
	if finish {
		feed(m, rec.Finished(testJob))
		closeRun(m)
	}
}

func paneStates() []paneState {
	failed := func(kind contract.FailureKind) paneState {
		return paneState{"failed-" + string(kind), func(t *testing.T, m *model) { live(t, m, "failed-"+string(kind), true) }}
	}
	// focused is the live run of recording rec (to its end when finish)
	// with pane p focused.
	focused := func(name, rec string, finish bool, p paneID) paneState {
		return paneState{name, func(t *testing.T, m *model) {
			live(t, m, rec, finish)
			m.setFocus(p)
		}}
	}
	return append([]paneState{
		{"idle", func(t *testing.T, m *model) {}},
		{"waiting", func(t *testing.T, m *model) { m.fileMissing = true }},
		{"first-launch", func(t *testing.T, m *model) {
			m.opts.Strategy = "/home/ana/.local/state/stratbench/workspace/strategy.py"
			m.opts.Workspace = "/home/ana/.local/state/stratbench/workspace"
			m.welcome()
			live(t, m, "passed", true)
		}},
		{"starting", func(t *testing.T, m *model) { m.requestRun() }},
		{"running", func(t *testing.T, m *model) { live(t, m, "demo", false) }},
		focused("running-hooks", "demo", false, paneHooks),
		focused("running-procs", "demo", false, paneProcs),
		{"stopping", func(t *testing.T, m *model) {
			live(t, m, "demo", false)
			m.Update(press("s"))
		}},
		{"passed", func(t *testing.T, m *model) { live(t, m, "passed", true) }},
		{"stopped", func(t *testing.T, m *model) {
			live(t, m, "demo", false)
			m.Update(press("s"))
			rec := fixtures.Load(t, "demo")
			feed(m, rec.Finished(testJob))
			closeRun(m)
		}},
		failed(contract.KindTimeout),
		failed(contract.KindMemory),
		failed(contract.KindProcesses),
		failed(contract.KindProtocol),
		failed(contract.KindException),
		failed(contract.KindCrash),
		focused("failed-syntax", "failed-syntax", true, paneFailure),
		focused("failed-memory-pane", "failed-memory", true, paneFailure),
		focused("failed-timeout-pane", "hung", true, paneFailure),
		focused("hung", "hung", false, paneHooks),
		{"passed-market", func(t *testing.T, m *model) { live(t, m, "passed-market", true) }},
		{"watching-modules", func(t *testing.T, m *model) {
			m.opts.Changes = make(chan watch.Change)
			// The save of helpers.py starts the run, which fails.
			m.Update(changeMsg{ok: true, change: watch.Change{Kind: watch.Changed, Modules: 2,
				Inputs: []string{"/home/ana/data/bars.csv"}, Cause: "helpers.py"}})
			m.Update(runStartedMsg{gen: m.gen, run: newFakeRun(testJob, 0)})
			rec := fixtures.Load(t, "failed-exception")
			feed(m, rec.Events(testJob)...)
			feed(m, rec.Finished(testJob))
			closeRun(m)
		}},
		{"start-error", func(t *testing.T, m *model) {
			m.requestRun()
			m.Update(runStartedMsg{gen: m.gen, err: &engine.UsageError{Err: errors.New(
				`--param slow=3: the strategy's MANIFEST declares no param "slow" (declared: allocation, fast, slow_ma)`)}})
		}},
		{"logs-truncated", func(t *testing.T, m *model) {
			live(t, m, "demo", false)
			lines := []job.LogLine{{Time: fixtures.T0, Stream: "system",
				Line: "output truncated: the first 64.00 MiB (67108864 bytes) of stdout and stderr were kept, the rest is discarded"}}
			feed(m, job.LogLines{JobID: testJob, Lines: lines, Dropped: 1234})
		}},
		{"logs-search", func(t *testing.T, m *model) {
			live(t, m, "demo", false)
			m.Update(press("/"))
			typeKeys(m, "sell")
			m.Update(press("enter"))
			m.Update(press("n"))
		}},
		{"jobs", func(t *testing.T, m *model) {
			withRecordedJobs(t, m)
			m.Update(press("6"))
		}},
		{"stored-job", func(t *testing.T, m *model) {
			withRecordedJobs(t, m)
			m.Update(press("6"))
			m.Update(press("G"))
			openSelected(t, m)
		}},
		{"stored-job-stopped", func(t *testing.T, m *model) {
			withRecordedJobs(t, m)
			m.Update(press("6"))
			m.Update(press("j"))
			openSelected(t, m)
		}},
		{"stored-job-logs", func(t *testing.T, m *model) {
			withRecordedJobs(t, m)
			m.Update(press("6"))
			m.Update(press("j"))
			m.Update(press("j"))
			openSelected(t, m)
			m.Update(press("3"))
		}},
		{"watch-warning", func(t *testing.T, m *model) {
			m.opts.Changes = make(chan watch.Change)
			live(t, m, "demo", false)
			m.Update(changeMsg{ok: true, change: watch.Change{Kind: watch.Warning,
				Err: errors.New("inotify watch limit reached (no space left on device): polling every 500ms instead; " +
					"raise the limit with: sudo sysctl fs.inotify.max_user_watches=524288")}})
		}},
		{"help", func(t *testing.T, m *model) {
			live(t, m, "demo", false)
			m.Update(press("?"))
		}},
	}, debugStates()...)
}

// withRecordedJobs gives m a job store holding three earlier jobs (recorded: the
// example that passed, a strategy that failed with an exception, the demo
// that was stopped), makes the demo in flight the live run of this session
// and lists the jobs.
func withRecordedJobs(t *testing.T, m *model) {
	t.Helper()
	store := newStore(t)
	m.opts.Store = store
	stored := func(name, id string, h int) {
		rec := fixtures.Load(t, name)
		r := rec.ReportAs(id)
		r.StartedAt = fixtures.T0.Add(-time.Duration(h) * time.Hour)
		saveJob(t, store, r, rec.Logs, rec.Equity)
	}
	stored("passed", "20261130-090000.000-0001", 27)
	stored("failed-exception", "20261130-100000.000-0002", 26)
	stored("demo", "20261130-110000.000-0003", 25)
	// The live run as job.json holds it while it runs.
	running := fixtures.Load(t, "demo").ReportAs(testJob)
	running.Status, running.Metrics, running.Failure, running.FinishedAt, running.DurationMS = job.StatusRunning, nil, nil, nil, 0
	saveJob(t, store, running, nil, nil)
	live(t, m, "demo", false)
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

// TestGoldenPanes renders every pane state at both sizes, without colour, and
// compares the screen with its golden file (go test -update rewrites them).
func TestGoldenPanes(t *testing.T) {
	for _, st := range paneStates() {
		for _, sz := range goldenSizes {
			t.Run(fmt.Sprintf("%s/%dx%d", st.name, sz[0], sz[1]), func(t *testing.T) {
				m := newTestModel(t, sz[0], sz[1])
				st.setup(t, m)
				out := m.View().Content
				checkGolden(t, out, sz[0], sz[1])
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
	live(t, m, "demo", false)
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
	live(t, m, "demo", false)
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
