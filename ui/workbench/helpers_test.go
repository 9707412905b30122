package workbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"stratbench/contract"
	"stratbench/job"
	"stratbench/themes"
	"stratbench/ui/internal/uitest"
)

// The helpers the workbench's tests share with the sweep view's (ui/internal/uitest).
var (
	press       = uitest.Press
	teaSize     = uitest.Size
	newStore    = uitest.NewStore
	saveJob     = uitest.SaveJob
	checkScreen = uitest.CheckScreen
	checkGolden = uitest.CheckGolden
	goldenSizes = uitest.GoldenSizes
)

// t0 is the start time of every test job.
var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// fakeRun is a RunHandle whose events the test writes.
type fakeRun struct {
	id   string
	ch   chan job.Event
	mu   sync.Mutex
	stop int
}

func newFakeRun(id string, buffer int) *fakeRun {
	return &fakeRun{id: id, ch: make(chan job.Event, buffer)}
}

func (r *fakeRun) ID() string               { return r.id }
func (r *fakeRun) Events() <-chan job.Event { return r.ch }
func (r *fakeRun) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stop++
}
func (r *fakeRun) stops() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stop
}

// newTestModel returns a model at size w×h in the plain theme, with a
// strategy file that exists and a fixed clock 12 s after t0.
func newTestModel(t testing.TB, w, h int) *model {
	t.Helper()
	dir := t.TempDir()
	strategy := filepath.Join(dir, "strategy.py")
	if err := os.WriteFile(strategy, []byte("def on_data(ctx, history):\n    pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := Options{
		Strategy: "/home/ana/strategies/strategy.py",
		Start: func(context.Context, []job.Breakpoint) (RunHandle, error) {
			return nil, errors.New("tests start runs by hand")
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m := newModel(ctx, opts, themes.Plain(), false)
	m.fileMissing = false
	m.now = func() time.Time { return t0.Add(12 * time.Second) }
	m.jobs.loc = time.UTC
	m.resize(w, h)
	return m
}

// send applies msgs in order, discarding commands.
func send(m *model, msgs ...tea.Msg) {
	for _, msg := range msgs {
		m.Update(msg)
	}
}

// startRun makes run the model's current run, as Options.Start would.
func startRun(m *model, run RunHandle) {
	m.requestRun()
	m.Update(runStartedMsg{gen: m.gen, run: run})
}

// feed delivers events of the current run as one batch.
func feed(m *model, events ...job.Event) {
	m.Update(eventsMsg{gen: m.gen, events: events})
}

// closeRun delivers the end of the current run's stream.
func closeRun(m *model) {
	m.Update(eventsMsg{gen: m.gen, closed: true})
}

// typeKeys sends each character of s as a key press.
func typeKeys(m *model, s string) {
	for _, r := range s {
		m.Update(press(string(r)))
	}
}

// screen returns the rendered screen without escape sequences.
func screen(m *model) string {
	return ansi.Strip(m.View().Content)
}

// jobStarted is the first event of test job id.
func jobStarted(id string) job.JobStarted {
	return job.JobStarted{
		JobID:     id,
		Dir:       "/home/ana/.local/state/stratbench/jobs/" + id,
		Strategy:  "/home/ana/strategies/strategy.py",
		Limits:    job.DefaultLimits(),
		Events:    5000,
		StartedAt: t0,
	}
}

// runningEvents are the events of a job that is well under way.
func runningEvents(id string) []job.Event {
	recent := make([]time.Duration, 40)
	for i := range recent {
		recent[i] = time.Duration(800+(i*137)%900) * time.Microsecond
	}
	recent[31] = 41 * time.Millisecond
	lines := []job.LogLine{
		{Time: t0, Stream: "system", Line: "worker started: python 3.11.7"},
		{Time: t0, Stream: "stdout", Line: "fast=10 slow=30"},
	}
	for i := range 30 {
		lines = append(lines, job.LogLine{Time: t0, Stream: "stdout", Line: fmt.Sprintf("bar %d close=%.2f signal=hold", 1000+i, 101.5+float64(i)/10)})
	}
	lines = append(lines, job.LogLine{Time: t0, Stream: "stderr", Line: "warning: spread wider than 5 bps"})
	lines = append(lines, job.LogLine{Time: t0, Stream: "stdout", Line: "bar 1030 BUY 10 @ 104.50"})
	return []job.Event{
		jobStarted(id),
		job.WorkerReady{JobID: id, Python: job.PythonInfo{Executable: "/usr/bin/python3", Version: "3.11.7"}, Hooks: []contract.Hook{contract.HookOnData, contract.HookOnExecution, contract.HookOnFinish}},
		job.HookStats{JobID: id, Hook: "on_data", Limit: 5 * time.Second,
			Stats:  job.Stats{Count: 1234, TotalMS: 1480, P50MS: 1.1, P95MS: 1.9, MaxMS: 41},
			Recent: recent,
			Slowest: []job.Call{
				{Duration: 41 * time.Millisecond, EventIndex: 1031, EventTime: t0.Add(-72 * time.Hour)},
				{Duration: 9 * time.Millisecond, EventIndex: 12, EventTime: t0.Add(-96 * time.Hour)},
			}},
		job.HookStats{JobID: id, Hook: "on_execution", Limit: 5 * time.Second,
			Stats:  job.Stats{Count: 3, TotalMS: 1.5, P50MS: 0.4, P95MS: 0.7, MaxMS: 0.7},
			Recent: []time.Duration{400 * time.Microsecond, 300 * time.Microsecond, 700 * time.Microsecond}},
		job.ResourceSample{JobID: id, Time: t0.Add(11 * time.Second),
			MemoryBytes: 1650 << 20, PeakMemoryBytes: 1700 << 20, Processes: 3, PeakProcesses: 4,
			Procs: []job.Proc{
				{PID: 4242, PPID: 1, RSSBytes: 1500 << 20, Command: "python3 -I bridge.py strategy.py"},
				{PID: 4250, PPID: 4242, RSSBytes: 100 << 20, Command: "python3 -c import helper"},
				{PID: 4251, PPID: 4250, RSSBytes: 50 << 20, Command: "sleep 30"},
			}},
		job.LogLines{JobID: id, Lines: lines},
		job.Progress{JobID: id, Done: 1234, Total: 5000, BarsPerSec: 410.4, ETA: 9 * time.Second},
	}
}

// passedReport is the report of a job that passed.
func passedReport(id string) *job.Report {
	fin := t0.Add(12 * time.Second)
	return &job.Report{
		JobID: id, Status: job.StatusPassed, Engine: "python",
		Strategy: job.StrategyInfo{Path: "/home/ana/strategies/strategy.py"},
		Data:     contract.DataInfo{Events: 5000},
		Limits:   job.LimitsReport{StartupS: 30, OnDataS: 5, OnExecutionS: 5, OnFinishS: 60, MemoryBytes: 2 << 30, Processes: 32, MessageBytes: 8 << 20, LogBytes: 64 << 20},
		Hooks: map[contract.Hook]job.Stats{
			"on_data":      {Count: 5000, TotalMS: 6000, P50MS: 1.1, P95MS: 2.0, MaxMS: 41},
			"on_execution": {Count: 14, TotalMS: 7, P50MS: 0.4, P95MS: 0.9, MaxMS: 1.2},
			"on_finish":    {Count: 1, TotalMS: 3, P50MS: 3, P95MS: 3, MaxMS: 3},
		},
		Resources: job.Resources{PeakMemoryBytes: 1700 << 20, PeakProcesses: 4},
		Logs:      job.LogsInfo{Bytes: 4096},
		Metrics: &contract.Metrics{WinRate: 0.571, FinalEquity: 104120.5, StartEquity: 100000, TotalReturn: 0.041205, Sharpe: 1.234,
			MaxDrawdown: 0.0312, Fills: 14, Trades: 7, Fees: 12.3, Exposure: 0.62},
		Metadata:   json.RawMessage(`{"note":"crossed 7 times"}`),
		StartedAt:  t0,
		FinishedAt: &fin,
		DurationMS: 12034,
	}
}

// failedReport is the report of a job that failed with kind.
func failedReport(id string, kind contract.FailureKind) *job.Report {
	r := passedReport(id)
	r.Status = job.StatusFailed
	r.Metrics = &contract.Metrics{StartEquity: 100000, FinalEquity: 99000, TotalReturn: -0.01, MaxDrawdown: 0.01, Fills: 2, Trades: 1, Fees: 1}
	r.Metadata = nil
	r.Hooks["on_data"] = job.Stats{Count: 1032, Failures: 1, TotalMS: 1300, P50MS: 1.1, P95MS: 2.0, MaxMS: 41}
	idx := 1031
	et := "2026-11-28T12:00:00Z"
	f := &contract.Failure{Kind: kind, Hook: contract.HookOnData, EventIndex: &idx, EventTime: &et}
	switch kind {
	case contract.KindTimeout:
		// A timeout has no traceback: the tree is killed, nothing unwinds.
		f.Message = "on_data did not return within the 5s limit"
	case contract.KindMemory:
		f.Message = "process tree used 2.10 GiB resident memory, over the 2.00 GiB limit"
	case contract.KindProcesses:
		f.Message = "process tree had 33 processes, over the 32-process limit"
	case contract.KindProtocol:
		f.Message = "message of 4.00 GiB exceeds the 8.00 MiB limit"
	case contract.KindException:
		f.Message = "ZeroDivisionError: division by zero"
		f.Traceback = "Traceback (most recent call last):\n  ...\nZeroDivisionError: division by zero"
		// The bridge leaves its own frames out.
		f.Frames = []contract.Frame{
			{File: "/home/ana/strategies/strategy.py", Line: 18, Function: "on_data", Source: "signal = edge(history)", User: true},
			{File: "/home/ana/strategies/signals.py", Line: 7, Function: "edge", Source: "return fast / (slow - slow)", User: true},
		}
	case contract.KindCrash:
		f.Message = "worker was killed by signal 11 (SIGSEGV) during on_data"
	}
	r.Failure = f
	return r
}

// withSyntheticJobs gives m a job store holding three earlier jobs made
// up for the model's tests (the golden screens use recorded ones), makes a
// run of this session the live one, and lists the jobs.
func withSyntheticJobs(t *testing.T, m *model) {
	t.Helper()
	store := newStore(t)
	m.opts.Store = store
	var logs []job.LogLine
	for i := range 40 {
		logs = append(logs, job.LogLine{Time: t0, Stream: "stdout", Line: fmt.Sprintf("stored line %d", i)})
	}
	logs = append(logs, job.LogLine{Time: t0, Stream: "stderr", Line: "Traceback (most recent call last):"})
	older := func(r *job.Report, h int) *job.Report {
		r.StartedAt = t0.Add(-time.Duration(h) * time.Hour)
		return r
	}
	saveJob(t, store, older(passedReport("20261130-090000.000-0001"), 27), logs[:10], equityCurve(800))
	saveJob(t, store, older(failedReport("20261130-100000.000-0002", contract.KindException), 26), logs, nil)
	stopped := older(passedReport("20261130-110000.000-0003"), 25)
	stopped.Status = job.StatusStopped
	saveJob(t, store, stopped, nil, nil)
	running := passedReport(testJob)
	running.Status, running.Metrics, running.DurationMS = job.StatusRunning, nil, 0
	saveJob(t, store, running, nil, nil)
	startRun(m, newFakeRun(testJob, 0))
	feed(m, runningEvents(testJob)...)
	m.Update(m.listJobs()())
}

// equityCurve is a deterministic curve of n points.
func equityCurve(n int) []float64 {
	out := make([]float64, n)
	v := 100000.0
	for i := range out {
		v += float64((i*7919)%13) - 5.5
		out[i] = v
	}
	return out
}
