package python

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"stratbench/contract"
	"stratbench/internal/testenv"
)

// TestBridgeServesOnBars: on_bars is called once per timestamp group the
// host sends, with the bars of that timestamp only (a symbol without a bar
// absent); ctx.history(symbol) is that symbol's window as of the call;
// ctx.symbol and ctx.bar are None; a bars kept past its call keeps its bars;
// a call that issues orders ends the batch, and the next batch resumes the
// held timestamps without sending them again; with numpy, ctx.panel is the
// last rows of every symbol, NaN where one had no bar. Both with the list
// history and with numpy.
func TestBridgeServesOnBars(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	t.Run("lists", func(t *testing.T) { testBridgeServesOnBars(t, py, "bars_probe.py", false) })
	t.Run("numpy", func(t *testing.T) { testBridgeServesOnBars(t, testenv.Python(t, "numpy"), "bars_probe_numpy.py", true) })
}

func testBridgeServesOnBars(t *testing.T, py, strategy string, numpy bool) {
	path, _ := filepath.Abs(filepath.Join("testdata", strategy))
	w := startWorkerWith(t, py, path, false)
	m, err := DecodeManifest(w.next(TypeManifest))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.Hooks, []contract.Hook{contract.HookOnBars, contract.HookOnExecution, contract.HookOnFinish}) {
		t.Fatalf("hooks %v", m.Hooks)
	}
	frame, _ := AppendJSON(nil, TypeInit, InitMsg{Params: map[string]any{}, Symbols: []string{"A", "B", "C"}, Cash: 1000,
		Artifacts: t.TempDir(), BudgetMS: 60_000})
	w.send(frame)
	w.next(TypeReady)

	// Five timestamps: A B C, A C, B, A B C, C.
	t0 := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC).UnixNano()
	minute := int64(time.Minute)
	syms := []int32{0, 1, 2, 0, 2, 1, 0, 1, 2, 2}
	stamp := []int64{0, 0, 0, 1, 1, 2, 3, 3, 3, 4}
	var bars Columns
	seq := map[int32]float64{0: 1, 1: 10, 2: 100}
	for i, s := range syms {
		bars.Time = append(bars.Time, t0+stamp[i]*minute)
		bars.Symbol = append(bars.Symbol, s)
		bars.Open = append(bars.Open, seq[s])
		bars.High = append(bars.High, seq[s]+1)
		bars.Low = append(bars.Low, seq[s]-1)
		bars.Close = append(bars.Close, seq[s]+0.5)
		bars.Volume = append(bars.Volume, 1)
		seq[s]++
	}
	if _, err := AppendGroupedBatch(nil, 1, 0, nil, bars, 3, []uint32{3, 2, 1, 3}); err == nil {
		t.Fatal("groups of 9 bars for a batch of 10 encoded")
	}
	frame, err = AppendGroupedBatch(nil, 1, 0, nil, bars, 3, []uint32{3, 2, 1, 3, 1})
	if err != nil {
		t.Fatal(err)
	}
	w.send(frame)
	// The second call orders: the worker yields after it.
	y, cmds := w.yield()
	if y.Through != 2 || len(y.Durations) != 2 || y.Commands != 2 || len(cmds) != 2 || cmds[0].Symbol != "C" || cmds[1].Symbol != "A" {
		t.Fatalf("yield %+v, commands %+v", y, cmds)
	}
	// Then an execution (call 3) and the three timestamps held (calls 4 to 6).
	execs := []ExecRecord{{OrderID: 2, Symbol: 0, Side: SideSell, Qty: 2, Status: StatusRejected, Reason: "no",
		Time: t0 + 3*minute, Event: 6, Cash: 990}}
	frame, err = AppendGroupedBatch(nil, 3, 5, execs, Columns{}, 3, []uint32{1, 3, 1})
	if err != nil {
		t.Fatal(err)
	}
	w.send(frame)
	if y, _ = w.yield(); y.Through != 6 || len(y.Durations) != 4 || y.Commands != 0 {
		t.Fatalf("yield %+v", y)
	}
	frame, _ = AppendJSON(nil, TypeFinish, FinishMsg{Call: 7})
	w.send(frame)
	fin, err := DecodeFinished(w.next(TypeFinished))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Seen       [][]any  `json:"seen"`
		Executions [][]any  `json:"executions"`
		Errors     []string `json:"errors"`
		Time       string   `json:"time"`
	}
	if err := json.Unmarshal(fin.Metadata, &got); err != nil {
		t.Fatal(err)
	}
	at := func(k int) string { return time.Unix(0, t0+int64(k)*minute).UTC().Format("2006-01-02T15:04:05+00:00") }
	want := [][]any{
		{at(0), []string{"A", "B", "C"}, []float64{1.5, 10.5, 100.5}, map[string][]float64{"A": {1.5}, "B": {10.5}, "C": {100.5}}, 1000},
		{at(1), []string{"A", "C"}, []float64{2.5, 101.5}, map[string][]float64{"A": {1.5, 2.5}, "B": {10.5}, "C": {100.5, 101.5}}, 1000},
		{at(2), []string{"B"}, []float64{11.5}, map[string][]float64{"A": {1.5, 2.5}, "B": {10.5, 11.5}, "C": {100.5, 101.5}}, 990},
		{at(3), []string{"A", "B", "C"}, []float64{3.5, 12.5, 102.5},
			map[string][]float64{"A": {1.5, 2.5, 3.5}, "B": {10.5, 11.5, 12.5}, "C": {100.5, 101.5, 102.5}}, 990},
		{at(4), []string{"C"}, []float64{103.5},
			map[string][]float64{"A": {1.5, 2.5, 3.5}, "B": {10.5, 11.5, 12.5}, "C": {101.5, 102.5, 103.5}}, 990},
	}
	if numpy {
		nan := any(nil)
		rows := [][]any{{1.5, 10.5, 100.5}, {2.5, nan, 101.5}, {nan, 11.5, nan}, {3.5, 12.5, 102.5}, {nan, nan, 103.5}}
		for k := range want {
			want[k] = append(want[k], rows[max(0, k-2):k+1])
		}
	}
	wantJSON, _ := json.Marshal(want)
	gotJSON, _ := json.Marshal(got.Seen)
	if string(gotJSON) != string(wantJSON) {
		t.Fatalf("seen\n%s\nwant\n%s", gotJSON, wantJSON)
	}
	if b, _ := json.Marshal(got.Executions); string(b) != `[[2,"A","A","`+at(3)+`",990]]` {
		t.Fatalf("executions %s", b)
	}
	if got.Time != at(4) {
		t.Fatalf("on_finish's ctx.time %s, want the last timestamp's %s", got.Time, at(4))
	}
	wantErrors := []string{"panel: ValueError: ctx.panel n must be between 1 and MANIFEST['history'] (3), got 4",
		"panel: ValueError: ctx.panel field must be one of open, high, low, close, volume, got 'price'",
		`history: KeyError: "no symbol 'Z' in the data (ctx.symbols: A, B, C)"`}
	if !numpy {
		needs := "panel: RuntimeError: ctx.panel needs numpy, which the strategy had not imported when its module had loaded"
		wantErrors = []string{needs, needs, wantErrors[2]}
	}
	if strings.Join(got.Errors, "\n") != strings.Join(wantErrors, "\n") {
		t.Fatalf("errors\n%s\nwant\n%s", strings.Join(got.Errors, "\n"), strings.Join(wantErrors, "\n"))
	}
}
