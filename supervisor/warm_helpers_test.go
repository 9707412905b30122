package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	pyb "stratbench/python"
)

// warmEnv is the environment of the warm tests' templates and runs: the
// test modules' folder on PYTHONPATH (a stand-in for site-packages).
func warmEnv(t testing.TB, extra ...string) []string {
	return append([]string{"PYTHONDONTWRITEBYTECODE=1", "PYTHONHASHSEED=0", "PYTHONPATH=" + script(t, "warm/site")}, extra...)
}

// templateLimits are the template's own limits in the tests: room for
// the template and, for each Fork in flight, the three processes that
// count toward it until the run is adopted (the fork's intermediate
// process, the run's init and its program).
var templateLimits = Limits{MemoryBytes: 1 << 30, Processes: 1 + 3*maxForking}

// templateSpec is the spec of a template of the bridge for strategy.
func templateSpec(t testing.TB, py, strategy string, c *collector, env []string) Spec {
	t.Helper()
	bridge, err := pyb.InstallBridge(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return Spec{Path: py, Args: pyb.TemplateArgs(bridge, strategy, TemplateSocketFD), Env: env,
		Dir: filepath.Dir(strategy), Output: c.output, Limits: templateLimits}
}

// startTemplate starts a template of the bridge for strategy; the test's
// cleanup closes it.
func startTemplate(t testing.TB, h *Host, py, strategy string, c *collector, env []string) *Template {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tp, err := h.StartTemplate(ctx, templateSpec(t, py, strategy, c, env))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tp.Close)
	return tp
}

// worker is a bridge run: its process and the host's ends of the protocol.
type worker struct {
	p     *Process
	c     *collector
	toW   *os.File // requests
	fromR *os.File // answers
	from  *pyb.Reader
	state *pyb.StatePage
	cmdR  *os.File
	// the worker's ends, closed once it started
	theirs []*os.File
}

// newWorker makes the protocol's descriptors of one worker.
func newWorker(t testing.TB) *worker {
	t.Helper()
	w := &worker{c: newCollector()}
	toR, toW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromR, fromW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	state, err := pyb.NewStatePage()
	if err != nil {
		t.Fatal(err)
	}
	w.toW, w.fromR, w.cmdR, w.state = toW, fromR, cmdR, state
	w.from = pyb.NewReader(fromR, 8<<20)
	// The debugger's pipes lead nowhere, as in every job but the
	// workbench's: the bridge reads an end of file for its hello.
	dbgIn, dbgHost, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	dbgHostOut, dbgOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	dbgHost.Close()
	dbgHostOut.Close()
	w.theirs = pyb.ExtraFiles(toR, fromW, state.File(), cmdW, dbgIn, dbgOut)
	t.Cleanup(w.close)
	return w
}

// started closes the worker's ends, which it holds now (or never will).
func (w *worker) started() {
	for _, f := range w.theirs {
		if f != w.state.File() {
			f.Close()
		}
	}
	w.theirs = nil
}

func (w *worker) close() {
	if w.p != nil {
		w.p.Kill()
	}
	w.started()
	w.toW.Close()
	w.fromR.Close()
	w.cmdR.Close()
	w.state.Close()
}

// runSpec is the RunSpec of a bridge run of strategy.
func (w *worker) runSpec(strategy string, env []string, limits Limits) RunSpec {
	return RunSpec{Args: pyb.RunArgs(strategy), Env: env, Dir: filepath.Dir(strategy), ExtraFiles: w.theirs,
		Limits: limits, Output: w.c.output}
}

// forkWorker forks a bridge run of strategy from tp.
func forkWorker(t testing.TB, tp *Template, strategy string, env []string, limits Limits) *worker {
	t.Helper()
	w := newWorker(t)
	p, err := tp.Fork(context.Background(), w.runSpec(strategy, env, limits))
	w.started()
	if err != nil {
		t.Fatal(err)
	}
	w.p = p
	return w
}

// startWorker starts a bridge run of strategy cold, with Host.Start.
func startWorker(t testing.TB, h *Host, py, bridge, strategy string, env []string, limits Limits) *worker {
	t.Helper()
	w := newWorker(t)
	p, err := h.Start(context.Background(), Spec{Path: py, Args: pyb.BridgeArgs(bridge, strategy), Env: env,
		Dir: filepath.Dir(strategy), ExtraFiles: w.theirs, Limits: limits, Output: w.c.output})
	w.started()
	if err != nil {
		t.Fatal(err)
	}
	w.p = p
	return w
}

// manifest waits for the worker's manifest: the strategy was loaded.
func (w *worker) manifest(t testing.TB) {
	t.Helper()
	f, err := w.from.Next()
	if err != nil {
		t.Fatalf("no manifest: %v; output %v", err, w.c.snapshot())
	}
	if f.Type != pyb.TypeManifest {
		t.Fatalf("frame %q, want the manifest: %s", f.Type, f.Payload)
	}
}

// firstHook initialises the worker and sends it one bar: its on_data runs.
func (w *worker) firstHook(t testing.TB) {
	t.Helper()
	frame, err := pyb.AppendJSON(nil, pyb.TypeInit, pyb.InitMsg{Params: map[string]any{}, Symbols: []string{"X"},
		Cash: 1000, Artifacts: os.TempDir(), BudgetMS: 50})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.toW.Write(frame); err != nil {
		t.Fatal(err)
	}
	if f, err := w.from.Next(); err != nil || f.Type != pyb.TypeReady {
		t.Fatalf("no ready after init: %q, %v; output %v", f.Type, err, w.c.snapshot())
	}
	bars := pyb.Columns{Time: []int64{1}, Symbol: []int32{0}, Open: []float64{1}, High: []float64{1}, Low: []float64{1},
		Close: []float64{1}, Volume: []float64{1}}
	frame, err = pyb.AppendBatch(nil, 1, 0, nil, bars, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.toW.Write(frame); err != nil {
		t.Fatal(err)
	}
}

// quit asks the worker to end and waits for its result.
func (w *worker) quit(t testing.TB) Result {
	t.Helper()
	if _, err := w.toW.Write(pyb.AppendQuit(nil)); err != nil {
		t.Fatal(err)
	}
	return waitDone(t, w.p, 30*time.Second)
}

// gatedRunInitEnv, in a run's environment, makes the test binary, started
// as that run's init, stop at a gate before it runs as one (TestMain reads
// it): its value is the gate's folder (see newInitGate).
const gatedRunInitEnv = "STRATBENCH_TEST_GATED_RUN_INIT"

// initGate holds a run's init until the test opens it: the init creates
// the file "arrived" in the folder, then opens the FIFO "gate" there for
// reading, which blocks until the test opens it for writing.
type initGate struct{ dir string }

// newInitGate makes a gate in a new folder.
func newInitGate(t testing.TB) initGate {
	t.Helper()
	g := initGate{dir: t.TempDir()}
	if err := unix.Mkfifo(filepath.Join(g.dir, "gate"), 0o600); err != nil {
		t.Fatal(err)
	}
	return g
}

// env is the environment entry that sends a run's init to the gate.
func (g initGate) env() string { return gatedRunInitEnv + "=" + g.dir }

// waitArrived waits until a run's init has arrived at the gate (its file
// appears): the fork's exchange with the template is over.
func (g initGate) waitArrived(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(g.dir, "arrived")); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no run init arrived at the gate")
		}
		time.Sleep(time.Millisecond)
	}
}

// open lets the init at the gate go on.
func (g initGate) open(t testing.TB) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(g.dir, "gate"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// waitAtGate is what gatedRunInitEnv asks of a run's init.
func waitAtGate(dir string) {
	if err := os.WriteFile(filepath.Join(dir, "arrived"), nil, 0o600); err != nil {
		fmt.Fprintf(os.Stderr, "arrive at the gate: %v\n", err)
		os.Exit(2)
	}
	f, err := os.Open(filepath.Join(dir, "gate"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "wait at the gate: %v\n", err)
		os.Exit(2)
	}
	f.Close()
}

// forkAsync forks a bridge run of strategy from tp in a goroutine of its
// own; the channel gets Fork's error once it returned.
func forkAsync(t testing.TB, tp *Template, strategy string, env []string, limits Limits) (*worker, <-chan error) {
	w := newWorker(t)
	spec := w.runSpec(strategy, env, limits)
	done := make(chan error, 1)
	go func() {
		p, err := tp.Fork(context.Background(), spec)
		w.p = p
		w.started()
		done <- err
	}()
	return w, done
}

// checkTemplateAlive reports an error when tp has ended, saying after what.
func checkTemplateAlive(t testing.TB, tp *Template, after string) {
	t.Helper()
	select {
	case <-tp.Process().Done():
		t.Errorf("the template ended %s: %+v", after, tp.Process().Wait())
	default:
	}
}
