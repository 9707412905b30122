package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"stratbench/contract"
	"stratbench/internal/leakcheck"
	"stratbench/internal/proctest"
	"stratbench/job"
	"stratbench/sandbox"
	"stratbench/supervisor"
)

var testHost *supervisor.Host

func TestMain(m *testing.M) {
	supervisor.MaybeRunInit()
	sandbox.MaybeRunLauncher()
	h, err := supervisor.NewHost()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testHost = h
	// No goroutine of the engine or of the supervisor it drives outlives
	// the tests: every job's goroutines end with it.
	os.Exit(leakcheck.Main(m, "stratbench/engine", "stratbench/supervisor"))
}

// replayDriver replays bars in batches and keeps the commands it receives:
// the market itself is the backtest package's business.
type replayDriver struct {
	bars     contract.Bars
	symbols  []string
	batch    int
	done     int
	commands []contract.Command
}

func newReplay(n, symbols int) *replayDriver {
	d := &replayDriver{batch: 1000}
	t0 := time.Date(2026, 9, 30, 12, 0, 0, 0, time.UTC)
	for s := 0; s < symbols; s++ {
		d.symbols = append(d.symbols, fmt.Sprintf("SYM%d", s))
	}
	for i := 0; i < n; i++ {
		p := 100 + float64(i%50)
		d.bars.Time = append(d.bars.Time, t0.Add(time.Duration(i/symbols)*time.Minute).UnixNano())
		d.bars.Symbol = append(d.bars.Symbol, int32(i%symbols))
		d.bars.Open = append(d.bars.Open, p)
		d.bars.High = append(d.bars.High, p+1)
		d.bars.Low = append(d.bars.Low, p-1)
		d.bars.Close = append(d.bars.Close, p+0.5)
		d.bars.Volume = append(d.bars.Volume, 1000)
	}
	return d
}

func (d *replayDriver) Setup() contract.Setup {
	return contract.Setup{
		Data:     contract.DataInfo{Source: "test", Events: d.bars.Len(), Symbols: d.symbols},
		DataHash: "test-data",
		Cash:     100000,
		Flags:    "test",
	}
}

func (d *replayDriver) Drive(ctx context.Context, w contract.Worker, _ contract.Records) error {
	for d.done < d.bars.Len() {
		end := min(d.done+d.batch, d.bars.Len())
		y, err := w.Run(ctx, &contract.Batch{Bars: d.bars.Slice(d.done, end), FirstEvent: d.done})
		if err != nil {
			return err
		}
		d.done += y.Bars
		d.commands = append(d.commands, y.Commands...)
		if y.Stopped {
			return contract.ErrStopped
		}
	}
	return nil
}

func (d *replayDriver) Outcome() contract.Outcome {
	return contract.Outcome{Metrics: contract.Metrics{Events: d.done}, OrdersHash: "h"}
}

// rejectingReplay is a replayDriver whose market rejects every order at once:
// the rejection is delivered before the next bar, as the backtest driver
// does with orders for unknown symbols.
type rejectingReplay struct{ replayDriver }

func newRejectingReplay(n int) *rejectingReplay { return &rejectingReplay{*newReplay(n, 1)} }

func (d *rejectingReplay) Drive(ctx context.Context, w contract.Worker, _ contract.Records) error {
	var pending []contract.Execution
	for d.done < d.bars.Len() {
		end := min(d.done+d.batch, d.bars.Len())
		y, err := w.Run(ctx, &contract.Batch{Executions: pending, Bars: d.bars.Slice(d.done, end), FirstEvent: d.done})
		if err != nil {
			return err
		}
		pending = pending[y.Executions:]
		d.done += y.Bars
		for _, c := range y.Commands {
			pending = append(pending, contract.Execution{OrderID: c.OrderID, Symbol: c.Symbol, Side: contract.Side(c.Op), Status: contract.ExecRejected,
				Reason: "unknown symbol", Time: d.bars.Time[min(d.done, d.bars.Len()-1)], Event: d.done, Cash: 100000})
		}
		if y.Stopped {
			return contract.ErrStopped
		}
	}
	return nil
}

var testPython *Interpreter

func findPython(t *testing.T) *Interpreter {
	t.Helper()
	if testPython == nil {
		py, err := FindPython(context.Background(), "")
		if err != nil {
			t.Skip(err)
		}
		testPython = py
	}
	return testPython
}

// shortLimits keep the suite fast; TestDefaultLimits covers the real ones.
// Startup stays long: a loaded CI machine can take seconds to start Python.
func shortLimits() job.Limits {
	l := job.DefaultLimits()
	l.Startup = time.Minute
	l.OnData = time.Second
	l.OnExecution = time.Second
	l.OnFinish = 2 * time.Second
	l.MemoryBytes = 256 << 20
	return l
}

// roomyLimits are for tests about something else than time, whose hooks do
// heavy work (starting 40 processes, printing 100 MiB).
func roomyLimits() job.Limits {
	l := shortLimits()
	l.OnData = 30 * time.Second
	return l
}

type run struct {
	report *job.Report
	events []job.Event
	home   string
	pids   []int
	dir    string
}

// runStrategy runs a strategy from testdata/strategies through a real worker
// and asserts that no process of its tree survives, checked by pid and by an
// environment marker every process of the tree inherits. during, when set, sees
// each event as it arrives.
func runStrategy(t *testing.T, name string, limits job.Limits, d contract.Driver, during func(*Job, job.Event)) run {
	t.Helper()
	return runStrategyOpts(t, name, limits, d, during, nil)
}

func runStrategyWith(t *testing.T, name string, limits job.Limits, d contract.Driver, configure func(*Config)) run {
	t.Helper()
	return runStrategyOpts(t, name, limits, d, nil, configure)
}

func runStrategyOpts(t *testing.T, name string, limits job.Limits, d contract.Driver, during func(*Job, job.Event), configure func(*Config)) run {
	t.Helper()
	home := t.TempDir()
	marker := fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())
	cfg := Config{
		Strategy: filepath.Join("..", "testdata", "strategies", name),
		Python:   findPython(t),
		Home:     home,
		CacheDir: filepath.Join(home, "cache"),
		Limits:   limits,
		Version:  "test",
		Host:     testHost,
		Env:      map[string]string{"STRATBENCH_TEST_MARKER": marker},
	}
	if configure != nil {
		configure(&cfg)
	}
	j, err := Start(context.Background(), cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	var got []job.Event
	for e := range j.Events() {
		got = append(got, e)
		if during != nil {
			during(j, e)
		}
	}
	rep, err := j.Wait()
	if err != nil {
		t.Fatal(err)
	}
	r := run{report: rep, events: got, home: home, dir: j.Dir()}
	if _, err := os.Stat(filepath.Join(j.Dir(), ownerFile)); !os.IsNotExist(err) {
		t.Errorf("owner record left after the job ended: %v", err)
	}
	// Strategies that start processes record their pids in the artifacts.
	if data, err := os.ReadFile(filepath.Join(j.Dir(), "artifacts", "pids.txt")); err == nil {
		for _, f := range strings.Fields(string(data)) {
			pid, _ := strconv.Atoi(f)
			r.pids = append(r.pids, pid)
		}
	}
	assertTreeGone(t, r.pids, marker, rep.Resources.TreeTracking)
	return r
}

// assertTreeGone checks that no process of the tree survived: by the pids
// the strategy recorded and by the marker in the environment. In a PID
// namespace the recorded pids are the namespace's, not ours, and the
// kernel ended the namespace with the tree: only the marker is checked.
func assertTreeGone(t *testing.T, pids []int, marker, tracking string) {
	t.Helper()
	if tracking == "pidns" {
		pids = nil
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil {
			if state, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); !bytes.Contains(state, []byte(") Z ")) {
				t.Errorf("process %d of the tree is still alive", pid)
			}
		}
	}
	for _, pid := range markedProcesses(marker) {
		t.Errorf("process %d of the tree is still alive", pid)
	}
}

// markedProcesses lists the processes whose environment carries the test
// marker (a zombie's is unreadable: it is not listed).
func markedProcesses(marker string) []int {
	return proctest.PIDs(func(p proctest.Proc) bool { return p.HasEnv("STRATBENCH_TEST_MARKER=" + marker) })
}

func assertFailure(t *testing.T, r run, kind contract.FailureKind, hook contract.Hook) *contract.Failure {
	t.Helper()
	rep := r.report
	if rep.Status != job.StatusFailed || rep.Failure == nil {
		t.Fatalf("status %q, failure %+v; want %s in %s", rep.Status, rep.Failure, kind, hook)
	}
	if rep.Failure.Kind != kind || rep.Failure.Hook != hook {
		t.Fatalf("failure %s in %s (%s), want %s in %s", rep.Failure.Kind, rep.Failure.Hook, rep.Failure.Message, kind, hook)
	}
	saved := loadJobJSON(t, r.dir)
	if saved.Status != job.StatusFailed || saved.Failure == nil || saved.Failure.Kind != kind {
		t.Fatalf("job.json: status %q failure %+v", saved.Status, saved.Failure)
	}
	if _, ok := r.events[len(r.events)-1].(job.Finished); !ok {
		t.Fatalf("last event %T, want Finished", r.events[len(r.events)-1])
	}
	return rep.Failure
}

func loadJobJSON(t *testing.T, dir string) *job.Report {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "job.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep job.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	return &rep
}

func readLogs(t *testing.T, dir string) []job.LogLine {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "logs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []job.LogLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l job.LogLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func TestPassingRun(t *testing.T) {
	d := newReplay(2500, 2)
	r := runStrategy(t, "ok_counter.py", shortLimits(), d, nil)
	rep := r.report
	if rep.Status != job.StatusPassed || rep.Failure != nil {
		t.Fatalf("status %s failure %+v\nlogs: %+v", rep.Status, rep.Failure, readLogs(t, r.dir))
	}
	if d.done != 2500 || rep.Hooks[contract.HookOnData].Count != 2500 || rep.Hooks[contract.HookOnFinish].Count != 1 {
		t.Fatalf("bars %d, hooks %+v", d.done, rep.Hooks)
	}
	if string(rep.Metadata) != `{"bars":2500}` {
		t.Fatalf("metadata %s", rep.Metadata)
	}
	if rep.Strategy.Params["every"] != int64(100) && rep.Strategy.Params["every"] != float64(100) {
		t.Fatalf("params %+v", rep.Strategy.Params)
	}
	if rep.Fingerprint == "" || rep.Python.Executable == "" || rep.FinishedAt == nil {
		t.Fatalf("report %+v", rep)
	}
	logs := readLogs(t, r.dir)
	if len(logs) != 25 || logs[0].Stream != "stdout" || !strings.HasPrefix(logs[0].Line, "bar 100 SYM1") {
		t.Fatalf("%d log lines, first %+v", len(logs), logs[0])
	}
	var started, ready, finished bool
	for _, e := range r.events {
		switch e.(type) {
		case job.JobStarted:
			started = true
		case job.WorkerReady:
			ready = true
		case job.Finished:
			finished = true
		}
		if e.Job() != rep.JobID {
			t.Fatalf("event %T of job %s", e, e.Job())
		}
	}
	if !started || !ready || !finished {
		t.Fatalf("events: started %v ready %v finished %v", started, ready, finished)
	}
}

func TestParamsOverrideAndUsageErrors(t *testing.T) {
	home := t.TempDir()
	cfg := Config{Strategy: "../testdata/strategies/ok_counter.py", Python: findPython(t), Home: home,
		CacheDir: filepath.Join(home, "cache"), Limits: shortLimits(), Host: testHost, Params: []string{"every=7"}}
	job, err := Start(context.Background(), cfg, newReplay(14, 1))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := job.Wait()
	if err != nil || rep.Strategy.Params["every"] != int64(7) || string(rep.Metadata) != `{"bars":14}` {
		t.Fatalf("report %+v, err %v", rep, err)
	}
	for _, bad := range []struct{ param, want string }{
		{"slow=3", `declares no param "slow" (declared: every)`},
		{"every=abc", "every=abc: not an int (the default is 100)"},
		{"every", `"every": want key=value`},
	} {
		cfg.Params = []string{bad.param}
		job, err := Start(context.Background(), cfg, newReplay(14, 1))
		if err != nil {
			t.Fatal(err)
		}
		_, err = job.Wait()
		if _, ok := err.(*UsageError); !ok || !strings.Contains(err.Error(), bad.want) {
			t.Fatalf("--param %s: %v, want a usage error containing %q", bad.param, err, bad.want)
		}
		if _, serr := os.Stat(job.Dir()); !os.IsNotExist(serr) {
			t.Fatalf("--param %s: job folder kept", bad.param)
		}
	}
}

func TestInfiniteLoopTimesOut(t *testing.T) {
	r := runStrategy(t, "infinite_loop.py", shortLimits(), newReplay(10, 1), nil)
	f := assertFailure(t, r, contract.KindTimeout, contract.HookOnData)
	if f.EventIndex == nil || *f.EventIndex != 2 || f.EventTime == nil || *f.EventTime != "2026-09-30T12:02:00Z" {
		t.Fatalf("failure event %v %v", f.EventIndex, f.EventTime)
	}
	if el := hookKilledAfter(t, r, "looping forever"); el < time.Second {
		t.Fatalf("on_data killed %s after it started, before its 1 s limit", el)
	}
	// The two calls that returned before the loop count, though their
	// durations died with the worker.
	if s := r.report.Hooks[contract.HookOnData]; s.Count != 2 || s.Failures != 1 {
		t.Fatalf("on_data stats %+v", s)
	}
	assertLoopStack(t, f)
}

// assertLoopStack checks that a timeout of infinite_loop.py carries the
// worker's stack, ending in the loop of on_data, marked as the user's.
func assertLoopStack(t *testing.T, f *contract.Failure) {
	t.Helper()
	if len(f.Frames) == 0 {
		t.Fatalf("timeout without the worker's stack: %+v", f)
	}
	last := f.Frames[len(f.Frames)-1]
	if !last.User || filepath.Base(last.File) != "infinite_loop.py" || last.Function != "on_data" ||
		(last.Line != 13 && last.Line != 14) {
		t.Fatalf("last frame %+v, want the user's on_data at the loop (infinite_loop.py:13 or 14)", last)
	}
	for _, fr := range f.Frames {
		if strings.Contains(fr.File, "bridge") {
			t.Fatalf("the bridge's frame %+v is shown", fr)
		}
	}
	if !strings.Contains(f.Traceback, "written by the worker") ||
		!strings.Contains(f.Traceback, "    while True:\n") && !strings.Contains(f.Traceback, "    pass\n") {
		t.Fatalf("traceback %q", f.Traceback)
	}
}

func TestExceptionInHelper(t *testing.T) {
	r := runStrategy(t, "exception_helper.py", shortLimits(), newReplay(10, 1), nil)
	f := assertFailure(t, r, contract.KindException, contract.HookOnData)
	if !strings.Contains(f.Message, "ZeroDivisionError") || !strings.Contains(f.Traceback, "position_size") {
		t.Fatalf("failure %+v", f)
	}
	var user []string
	for _, fr := range f.Frames {
		if fr.User {
			user = append(user, fmt.Sprintf("%s:%d %s", fr.Function, fr.Line, fr.Source))
		}
	}
	want := []string{"on_data:14 position_size(ctx.cash, ctx.bar.close)", "position_size:6 return cash / (price - price)  # ZeroDivisionError"}
	if strings.Join(user, "|") != strings.Join(want, "|") {
		t.Fatalf("user frames %q, want %q", user, want)
	}
	if r.report.CommandsDiscarded != 1 || *f.EventIndex != 4 {
		t.Fatalf("discarded %d, event %d", r.report.CommandsDiscarded, *f.EventIndex)
	}
	if s := r.report.Hooks[contract.HookOnData]; s.Count != 4 || s.Failures != 1 {
		t.Fatalf("on_data stats %+v", s)
	}
}

func TestStartupFailures(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"syntax_error.py", "SyntaxError"},
		{"no_on_data.py", "defines no on_data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runStrategy(t, tc.name, shortLimits(), newReplay(10, 1), nil)
			f := assertFailure(t, r, contract.KindException, contract.HookStartup)
			if !strings.Contains(f.Message, tc.want) || f.EventIndex != nil {
				t.Fatalf("failure %+v", f)
			}
		})
	}
}

func TestWorkerExitIsACrash(t *testing.T) {
	r := runStrategy(t, "os_exit.py", shortLimits(), newReplay(10, 1), nil)
	f := assertFailure(t, r, contract.KindCrash, contract.HookOnData)
	if !strings.Contains(f.Message, "exited with code 3") {
		t.Fatalf("message %q", f.Message)
	}
}

func TestMemoryHogInGrandchild(t *testing.T) {
	r := runStrategy(t, "memory_grandchild.py", roomyLimits(), newReplay(100000, 1), nil)
	f := assertFailure(t, r, contract.KindMemory, contract.HookOnData)
	if len(r.pids) != 2 {
		t.Fatalf("pids %v: the grandchild did not start", r.pids)
	}
	if r.report.Resources.PeakMemoryBytes < 256<<20 {
		t.Fatalf("peak %d under the limit; %s", r.report.Resources.PeakMemoryBytes, f.Message)
	}
}

func TestProcessLimit(t *testing.T) {
	r := runStrategy(t, "process_spawner.py", roomyLimits(), newReplay(100000, 1), nil)
	assertFailure(t, r, contract.KindProcesses, contract.HookOnData)
	// The 32nd child can be killed before the strategy records its pid.
	if r.report.Resources.PeakProcesses <= 32 || len(r.pids) < 31 {
		t.Fatalf("peak processes %d, %d started", r.report.Resources.PeakProcesses, len(r.pids))
	}
}

func TestSetsidEscapeeIsCountedAndKilled(t *testing.T) {
	r := runStrategy(t, "setsid_escape.py", roomyLimits(), newReplay(100000, 1), nil)
	assertFailure(t, r, contract.KindMemory, contract.HookOnData)
	if len(r.pids) != 1 {
		t.Fatalf("escapee pids %v", r.pids)
	}
}

func TestIgnoredSIGTERM(t *testing.T) {
	r := runStrategy(t, "ignore_sigterm.py", shortLimits(), newReplay(10, 1), nil)
	assertFailure(t, r, contract.KindTimeout, contract.HookOnData)
	if len(r.pids) != 2 {
		t.Fatalf("pids %v", r.pids)
	}
}

// TestRejectionChainTimesOut: on_execution answering every rejection with
// another order the market rejects at once never lets the replay move on;
// each call is quick, so only the time spent at the event stops it.
func TestRejectionChainTimesOut(t *testing.T) {
	r := runStrategyWith(t, "rejection_chain.py", shortLimits(), newRejectingReplay(10), nil)
	f := assertFailure(t, r, contract.KindTimeout, contract.HookOnExecution)
	if f.EventIndex == nil || *f.EventIndex != 1 || !strings.Contains(f.Message, "stayed at event 1") {
		t.Fatalf("failure %+v", f)
	}
}

// burstReplay delivers many fills at event 1, and takes in the strategy's
// answers as orders that rest (they never fill).
type burstReplay struct {
	replayDriver
	fills int
}

func (d *burstReplay) Drive(ctx context.Context, w contract.Worker, _ contract.Records) error {
	var pending []contract.Execution
	for d.done < d.bars.Len() {
		if d.done == 1 && d.fills > 0 {
			for i := 0; i < d.fills; i++ {
				pending = append(pending, contract.Execution{OrderID: int64(i + 1), Symbol: "SYM0", Side: contract.SideBuy, Qty: 1, Price: 100,
					Status: contract.ExecFilled, Time: d.bars.Time[1], Event: 1, Cash: 100000, Position: float64(i + 1)})
			}
			d.fills = 0
		}
		end := min(d.done+d.batch, d.bars.Len())
		y, err := w.Run(ctx, &contract.Batch{Executions: pending, Bars: d.bars.Slice(d.done, end), FirstEvent: d.done})
		if err != nil {
			return err
		}
		pending = pending[y.Executions:]
		if y.Bars > 0 {
			d.done += y.Bars
		}
		if y.Stopped {
			return contract.ErrStopped
		}
	}
	return nil
}

// TestSlowBurstOfFills: fills at one bar, each answered in 20 ms with a
// resting order, keep the replay at that bar. The host measures the time at
// one event on its own clock, whatever the executions do: a burst that
// takes less than the on_execution limit passes, one that takes longer is an
// on_execution timeout at that event.
func TestSlowBurstOfFills(t *testing.T) {
	limits := shortLimits()
	t.Run("within the limit", func(t *testing.T) {
		fills := int(limits.OnExecution/(20*time.Millisecond)) / 5
		d := &burstReplay{replayDriver: *newReplay(5, 1), fills: fills}
		d.batch = 1
		r := runStrategyWith(t, "slow_fills.py", limits, d, nil)
		if r.report.Status != job.StatusPassed || string(r.report.Metadata) != fmt.Sprintf(`{"fills":%d}`, fills) {
			t.Fatalf("status %s failure %+v metadata %s", r.report.Status, r.report.Failure, r.report.Metadata)
		}
	})
	t.Run("over the limit", func(t *testing.T) {
		fills := 2 * int(limits.OnExecution/(20*time.Millisecond))
		d := &burstReplay{replayDriver: *newReplay(5, 1), fills: fills}
		d.batch = 1
		r := runStrategyWith(t, "slow_fills.py", limits, d, nil)
		f := assertFailure(t, r, contract.KindTimeout, contract.HookOnExecution)
		if f.EventIndex == nil || *f.EventIndex != 1 || !strings.Contains(f.Message, "stayed at event 1") {
			t.Fatalf("failure %+v", f)
		}
	})
}

func TestFakedIdleTimesOut(t *testing.T) {
	r := runStrategy(t, "fake_idle.py", shortLimits(), newReplay(10, 1), nil)
	f := assertFailure(t, r, contract.KindTimeout, contract.HookOnData)
	if !strings.Contains(f.Message, "stalled between hook calls") {
		t.Fatalf("failure %+v", f)
	}
}

// TestFakedStopIsAProtocolFailure: a strategy that writes the host's stop
// request into the shared page itself, at its third bar, and lingers past
// the bridge's next look for a stop, fails with protocol at that call.
func TestFakedStopIsAProtocolFailure(t *testing.T) {
	r := runStrategy(t, "fake_stop.py", shortLimits(), newReplay(10, 1), nil)
	f := assertFailure(t, r, contract.KindProtocol, contract.HookOnData)
	if !strings.Contains(f.Message, "no stop was requested") || *f.EventIndex != 2 {
		t.Fatalf("failure %+v at event %d", f, *f.EventIndex)
	}
}

func TestHugeExceptionIsCut(t *testing.T) {
	r := runStrategy(t, "huge_exception.py", shortLimits(), newReplay(10, 1), nil)
	f := assertFailure(t, r, contract.KindException, contract.HookOnData)
	if len(f.Message) > 70<<10 || !strings.Contains(f.Message, "[cut: ") || !strings.Contains(f.Traceback, "huge_exception.py") {
		t.Fatalf("message of %d bytes, traceback %.200q", len(f.Message), f.Traceback)
	}
}

func TestBadLimitTypeRaisesAtTheStrategysLine(t *testing.T) {
	r := runStrategy(t, "bad_limit.py", shortLimits(), newReplay(10, 1), nil)
	f := assertFailure(t, r, contract.KindException, contract.HookOnData)
	if !strings.Contains(f.Message, "TypeError: limit must be a number, got str") {
		t.Fatalf("failure %+v", f)
	}
}

// cancelDriver cancels the job's context between two batches, after its own
// check of the context: the worker is killed, and the job is a stop.
type cancelDriver struct {
	replayDriver
	cancel context.CancelFunc
}

func (d *cancelDriver) Drive(ctx context.Context, w contract.Worker, _ contract.Records) error {
	if _, err := w.Run(ctx, &contract.Batch{Bars: d.bars.Slice(0, 10), FirstEvent: 0}); err != nil {
		return err
	}
	d.cancel()
	<-w.(*worker).proc.Done() // the watchdog kills the tree meanwhile
	_, err := w.Run(ctx, &contract.Batch{Bars: d.bars.Slice(10, 20), FirstEvent: 10})
	return err
}

func TestCancelBetweenBatchesIsAStop(t *testing.T) {
	home := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	d := &cancelDriver{replayDriver: *newReplay(100, 1), cancel: cancel}
	j, err := Start(ctx, Config{Strategy: filepath.Join("..", "testdata", "strategies", "ok_counter.py"), Python: findPython(t),
		Home: home, CacheDir: filepath.Join(home, "cache"), Limits: shortLimits(), Version: "t", Host: testHost}, d)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := j.Wait()
	if err != nil || rep.Status != job.StatusStopped || rep.Failure != nil {
		t.Fatalf("cancelled job: status %s failure %+v err %v", rep.Status, rep.Failure, err)
	}
}

// TestCancelAtStartIsAStop: a job killed while its worker starts (its
// context ended before the fork or the interpreter's start could finish:
// a sweep's second signal) is a stop, as a kill later is, not a crash of
// the strategy at startup; cold and forked from a pool's template alike.
func TestCancelAtStartIsAStop(t *testing.T) {
	home := t.TempDir()
	cfg := Config{Strategy: filepath.Join("..", "testdata", "strategies", "ok_counter.py"), Python: findPython(t),
		Home: home, CacheDir: filepath.Join(home, "cache"), Limits: shortLimits(), Version: "t", Host: testHost}
	pool, err := NewPool(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for name, start := range map[string]func(context.Context, Config, contract.Driver) (*Job, error){"cold": Start, "pool": pool.Start} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		j, err := start(ctx, cfg, newReplay(100, 1))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rep, err := j.Wait()
		if err != nil || rep.Status != job.StatusStopped || rep.Failure != nil {
			t.Errorf("%s: a job killed at its start: status %s failure %+v err %v, want stopped", name, rep.Status, rep.Failure, err)
		}
	}
}

func TestGarbageOnInheritedFDs(t *testing.T) {
	r := runStrategy(t, "fd_garbage.py", shortLimits(), newReplay(10, 1), nil)
	assertFailure(t, r, contract.KindProtocol, contract.HookOnData)
}

func TestFinishFailures(t *testing.T) {
	t.Run("loop", func(t *testing.T) {
		r := runStrategy(t, "finish_loop.py", shortLimits(), newReplay(10, 1), nil)
		f := assertFailure(t, r, contract.KindTimeout, contract.HookOnFinish)
		if f.EventIndex != nil {
			t.Fatalf("on_finish failure with event %d", *f.EventIndex)
		}
	})
	t.Run("huge result", func(t *testing.T) {
		r := runStrategy(t, "finish_huge.py", shortLimits(), newReplay(10, 1), nil)
		f := assertFailure(t, r, contract.KindProtocol, contract.HookOnFinish)
		if !strings.Contains(f.Message, "exceeds the 8.00 MiB limit") {
			t.Fatalf("message %q", f.Message)
		}
	})
}

func TestLogFloodIsCapped(t *testing.T) {
	r := runStrategy(t, "log_flood.py", roomyLimits(), newReplay(10, 1), nil)
	rep := r.report
	if rep.Status != job.StatusPassed {
		t.Fatalf("status %s failure %+v", rep.Status, rep.Failure)
	}
	if !rep.Logs.Truncated || rep.Logs.Bytes != 64<<20 {
		t.Fatalf("logs %+v", rep.Logs)
	}
	notices := 0
	var kept int64
	for _, l := range readLogs(t, r.dir) {
		switch l.Stream {
		case "system":
			notices++
		case "stdout":
			kept += int64(len(l.Line)) + 1
		}
	}
	if notices != 1 || kept != 64<<20 {
		t.Fatalf("%d notices, %d bytes kept", notices, kept)
	}
}

func TestBadOutputBytes(t *testing.T) {
	r := runStrategy(t, "bad_output.py", roomyLimits(), newReplay(10, 1), nil)
	if r.report.Status != job.StatusPassed {
		t.Fatalf("status %s failure %+v", r.report.Status, r.report.Failure)
	}
	logs := readLogs(t, r.dir)
	if len(logs) != 3 {
		t.Fatalf("%d lines", len(logs))
	}
	if logs[0].Line != "bad bytes: \ufffd(" {
		t.Fatalf("first line %q", logs[0].Line)
	}
	if !strings.HasSuffix(logs[1].Line, supervisor.CutMarker) || len(logs[1].Line) > 65<<10 {
		t.Fatalf("long line of %d bytes not cut", len(logs[1].Line))
	}
	if logs[2].Line != "after the long line" {
		t.Fatalf("third line %q", logs[2].Line)
	}
}

func TestStopRunsOnFinish(t *testing.T) {
	// Stop once the first bars are served, as the progress says.
	r := runStrategy(t, "slow_finish.py", shortLimits(), newReplay(100000, 1), func(j *Job, e job.Event) {
		if p, ok := e.(job.Progress); ok && p.Done > 0 {
			j.Stop()
		}
	})
	rep := r.report
	if rep.Status != job.StatusStopped || rep.Failure != nil || string(rep.Metadata) != `{"finished":true}` {
		t.Fatalf("status %s failure %+v metadata %s", rep.Status, rep.Failure, rep.Metadata)
	}
	if n := rep.Hooks[contract.HookOnData].Count; n == 0 || n >= 100000 {
		t.Fatalf("%d on_data calls", n)
	}
}

// TestRunningReportHasTheParams: job.json says what params a job runs with
// while it runs (the MANIFEST's defaults with the --param given), not only
// once it ended: a job whose stratbench is killed is recovered from that
// report. It is read once the strategy has printed from its first bar, and
// the job is then stopped.
func TestRunningReportHasTheParams(t *testing.T) {
	var running []byte
	var readErr error
	r := runStrategyOpts(t, "", shortLimits(), newReplay(100000, 1), func(j *Job, e job.Event) {
		ll, ok := e.(job.LogLines)
		if !ok || running != nil || readErr != nil {
			return
		}
		for _, l := range ll.Lines {
			if strings.HasPrefix(l.Line, "first bar") {
				running, readErr = os.ReadFile(filepath.Join(j.Dir(), "job.json"))
				j.Stop()
				return
			}
		}
	}, func(c *Config) {
		// The sweep tests' strategy: MANIFEST params, "first bar" printed
		// on the first bar, slow_ms per bar.
		c.Strategy = filepath.Join("..", "testdata", "sweep", "sma.py")
		c.Params = []string{"fast=3", "slow_ms=2"}
	})
	if readErr != nil || running == nil {
		t.Fatalf("job.json while the job ran: %v (read: %v)", readErr, running != nil)
	}
	var rep job.Report
	if err := json.Unmarshal(running, &rep); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"fast": 3.0, "slow": 20.0, "fail_at": -1.0, "slow_ms": 2.0}
	if rep.Status != job.StatusRunning || fmt.Sprint(rep.Strategy.Params) != fmt.Sprint(want) {
		t.Fatalf("job.json while the job ran: status %s params %v, want running with %v", rep.Status, rep.Strategy.Params, want)
	}
	if rep.Python.Executable == "" || rep.Python.Version == "" || rep.Strategy.SHA256 == "" || rep.Data.Events != 100000 {
		t.Fatalf("job.json while the job ran lacks an input of the fingerprint: %+v", rep)
	}
	if rep.Resources.TreeTracking != r.report.Resources.TreeTracking || rep.Resources.TreeTracking == "" {
		t.Errorf("job.json while the job ran: tree tracking %q, want the final report's %q", rep.Resources.TreeTracking, r.report.Resources.TreeTracking)
	}
	if r.report.Status != job.StatusStopped || fmt.Sprint(r.report.Strategy.Params) != fmt.Sprint(map[string]any{"fast": int64(3), "slow": int64(20), "fail_at": int64(-1), "slow_ms": 2.0}) {
		t.Fatalf("final report: status %s params %v", r.report.Status, r.report.Strategy.Params)
	}
}

// hookKilledAfter returns how long after the looping hook started (the time
// the strategy printed after marker) the job ended.
func hookKilledAfter(t *testing.T, r run, marker string) time.Duration {
	t.Helper()
	for _, l := range readLogs(t, r.dir) {
		if rest, ok := strings.CutPrefix(l.Line, marker+" since "); ok {
			secs, err := strconv.ParseFloat(rest, 64)
			if err != nil {
				t.Fatalf("log line %q: %v", l.Line, err)
			}
			return r.report.FinishedAt.Sub(time.UnixMicro(int64(secs * 1e6)))
		}
	}
	t.Fatalf("no log line %q", marker)
	return 0
}

// steadyWallClock runs f and skips the test when the wall clock stepped
// meanwhile (by more than 250 ms against the monotonic clock): a hook's
// time is measured on it (hookKilledAfter: the strategy prints
// time.time(), the report has the host's end), and a VM whose clock is
// set while the run goes on (CI failed once with a hook killed at the
// limit measured as 76 s by a step of 16 s) says nothing about the limit.
func steadyWallClock(t *testing.T, f func()) {
	t.Helper()
	start := time.Now()
	f()
	mono := time.Since(start)
	wall := time.Now().Round(0).Sub(start.Round(0)) // Round(0) drops the monotonic reading
	if d := wall - mono; d > 250*time.Millisecond || d < -250*time.Millisecond {
		t.Skipf("the wall clock stepped by %v during the run; its hook's time is measured on it", d)
	}
}

func TestDefaultLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("takes a minute")
	}
	t.Run("on_data", func(t *testing.T) {
		t.Parallel()
		var r run
		steadyWallClock(t, func() { r = runStrategy(t, "infinite_loop.py", job.DefaultLimits(), newReplay(10, 1), nil) })
		assertFailure(t, r, contract.KindTimeout, contract.HookOnData)
		el := hookKilledAfter(t, r, "looping forever")
		if el < 5*time.Second || el > 6500*time.Millisecond {
			t.Fatalf("on_data killed %s after it started, want 5.0–6.5 s", el)
		}
		t.Logf("on_data: job ended %s after the hook started (limit 5 s)", el)
	})
	t.Run("on_finish", func(t *testing.T) {
		t.Parallel()
		var r run
		steadyWallClock(t, func() { r = runStrategy(t, "finish_loop.py", job.DefaultLimits(), newReplay(10, 1), nil) })
		assertFailure(t, r, contract.KindTimeout, contract.HookOnFinish)
		el := hookKilledAfter(t, r, "on_finish looping forever")
		if el < 60*time.Second || el > 61500*time.Millisecond {
			t.Fatalf("on_finish killed %s after it started, want 60.0–61.5 s", el)
		}
		t.Logf("on_finish: job ended %s after the hook started (limit 60 s)", el)
	})
}

// TestSandboxKeepsFailureKinds: the failure modes that still apply inside
// the sandbox end with the same kind and hook.
func TestSandboxKeepsFailureKinds(t *testing.T) {
	if err := sandbox.Check(); err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		file string
		kind contract.FailureKind
		hook contract.Hook
	}{
		{"infinite_loop.py", contract.KindTimeout, contract.HookOnData},
		{"exception_helper.py", contract.KindException, contract.HookOnData},
		{"syntax_error.py", contract.KindException, contract.HookStartup},
		{"no_on_data.py", contract.KindException, contract.HookStartup},
		{"os_exit.py", contract.KindCrash, contract.HookOnData},
		{"finish_loop.py", contract.KindTimeout, contract.HookOnFinish},
		{"finish_huge.py", contract.KindProtocol, contract.HookOnFinish},
		{"fd_garbage.py", contract.KindProtocol, contract.HookOnData},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r := runStrategyWith(t, tc.file, shortLimits(), newReplay(10, 1), func(c *Config) { c.Sandbox = true })
			f := assertFailure(t, r, tc.kind, tc.hook)
			if !r.report.Python.Sandbox {
				t.Fatal("report says no sandbox")
			}
			if tc.file == "infinite_loop.py" {
				assertLoopStack(t, f)
			}
		})
	}
	t.Run("log_flood.py", func(t *testing.T) {
		r := runStrategyWith(t, "log_flood.py", roomyLimits(), newReplay(10, 1), func(c *Config) { c.Sandbox = true })
		if r.report.Status != job.StatusPassed || !r.report.Logs.Truncated || r.report.Logs.Bytes != 64<<20 {
			t.Fatalf("status %s logs %+v", r.report.Status, r.report.Logs)
		}
	})
}
