package backtest

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"stratbench/contract"
	"stratbench/data"
)

// scriptWorker is an in-process contract.Worker that plays a strategy written
// in Go: onData runs once per bar and onExec once per execution, as the
// Python bridge would call the hooks. It keeps ctx.cash and positions the
// way the bridge does (from each execution) and records what it received.
type scriptWorker struct {
	t       testing.TB
	symbols []string
	onData  func(w *scriptWorker, ev barEvent) []contract.Command
	onExec  func(w *scriptWorker, x contract.Execution) []contract.Command
	stopAt  int // stop request after this event's on_data; -1 for none

	cash     float64
	position map[string]float64
	nextID   int64
	hook     contract.Hook
	event    int

	execs    []contract.Execution
	events   []int
	batches  []batchShape
	timeline []string // "x <status> #<id>" per execution, "d <event>" per bar
}

type barEvent struct {
	Event                          int
	Time                           int64
	Symbol                         string
	Open, High, Low, Close, Volume float64
}

type batchShape struct{ first, execs, bars int }

func newScriptWorker(t testing.TB, d *Driver) *scriptWorker {
	s := d.Setup()
	return &scriptWorker{t: t, symbols: s.Data.Symbols, cash: s.Cash, position: map[string]float64{}, stopAt: -1}
}

func (w *scriptWorker) Manifest() contract.Manifest {
	return contract.Manifest{Name: "script", Hooks: []contract.Hook{contract.HookOnData, contract.HookOnExecution}, History: 100}
}

func (w *scriptWorker) Run(ctx context.Context, b *contract.Batch) (contract.Yield, error) {
	w.batches = append(w.batches, batchShape{b.FirstEvent, len(b.Executions), b.Bars.Len()})
	var y contract.Yield
	for _, x := range b.Executions {
		w.execs = append(w.execs, x)
		w.timeline = append(w.timeline, "x "+string(x.Status)+" #"+strconv.FormatInt(x.OrderID, 10))
		w.cash = x.Cash
		if x.Symbol != "" {
			w.position[x.Symbol] = x.Position
		}
		y.Executions++
		if w.onExec != nil {
			w.hook, w.event = contract.HookOnExecution, b.FirstEvent
			if cmds := w.onExec(w, x); len(cmds) > 0 {
				y.Commands = cmds
				return y, nil
			}
		}
	}
	for i := 0; i < b.Bars.Len(); i++ {
		ev := barEvent{
			Event: b.FirstEvent + i, Time: b.Bars.Time[i], Symbol: w.symbols[b.Bars.Symbol[i]],
			Open: b.Bars.Open[i], High: b.Bars.High[i], Low: b.Bars.Low[i], Close: b.Bars.Close[i], Volume: b.Bars.Volume[i],
		}
		w.events = append(w.events, ev.Event)
		w.timeline = append(w.timeline, "d "+strconv.Itoa(ev.Event))
		y.Bars++
		var cmds []contract.Command
		if w.onData != nil {
			w.hook, w.event = contract.HookOnData, ev.Event
			cmds = w.onData(w, ev)
		}
		if ev.Event == w.stopAt {
			y.Commands, y.Stopped = cmds, true
			return y, nil
		}
		if len(cmds) > 0 {
			y.Commands = cmds
			return y, nil
		}
	}
	return y, nil
}

// order returns a buy or sell command with the next order id.
func (w *scriptWorker) order(op contract.Op, symbol string, qty float64, limit ...float64) contract.Command {
	w.nextID++
	c := contract.Command{Op: op, OrderID: w.nextID, Symbol: symbol, Qty: qty, Hook: w.hook}
	if len(limit) > 0 {
		c.Limit = &limit[0]
	}
	return c
}

func (w *scriptWorker) cancel(id int64) contract.Command {
	return contract.Command{Op: contract.OpCancel, OrderID: id, Hook: w.hook}
}

// mustParse opens bar data written from text to a file named name.
func mustParse(t testing.TB, name, text string) *data.Set {
	t.Helper()
	set, err := openText(t, name, text, data.Window{})
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	return set
}

// openText opens bar data written from text to a file named name, inside w.
func openText(t testing.TB, name, text string, w data.Window) (*data.Set, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return openPaths(t, w, path)
}

// openPaths opens bar data inside w; the set is closed when the test ends.
func openPaths(t testing.TB, w data.Window, paths ...string) (*data.Set, error) {
	t.Helper()
	set, err := data.Open(context.Background(), paths, data.Options{Window: w})
	if err == nil {
		t.Cleanup(func() { set.Close() })
	}
	return set, err
}

// sample returns the bundled sample inside w.
func sample(t testing.TB, w data.Window) *data.Set {
	t.Helper()
	set, err := data.Sample(w)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func mustDriver(t testing.TB, d *data.Set, opts Options) *Driver {
	t.Helper()
	drv, err := NewDriver(d, opts)
	if err != nil {
		t.Fatalf("NewDriver: %v", err)
	}
	return drv
}

// closeEnough compares floats to 1e-9 relative (absolute near zero).
func closeEnough(a, b float64) bool {
	if a == b || math.IsNaN(a) && math.IsNaN(b) {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// memRecords is an in-memory contract.Records: the content of every record
// file by name.
type memRecords map[string]*bytes.Buffer

func newMemRecords() memRecords { return memRecords{} }

func (m memRecords) Create(name string) io.Writer {
	b := &bytes.Buffer{}
	m[name] = b
	return b
}

// discardRecords is an contract.Records that keeps nothing (benchmarks).
type discardRecords struct{}

func (discardRecords) Create(string) io.Writer { return io.Discard }

// holdAll makes every event of d's data readable without Drive, for tests
// that call the market's parts directly.
func holdAll(t testing.TB, d *Driver) {
	t.Helper()
	st, err := d.set.Stream(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	d.stream = st
	t.Cleanup(d.closeStream)
	if !d.hold(d.n) {
		t.Fatal(d.dataErr)
	}
}
