package python

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// debugWorker is a bridge started with the debugger's hello, past its
// handshake, with three bars of one symbol.
func debugWorker(t *testing.T, breaks []DebugBreak) *worker {
	t.Helper()
	path, _ := filepath.Abs("testdata/debug_strategy.py")
	w := startDebugWorker(t, path, breaks)
	w.next(TypeManifest)
	frame, err := AppendJSON(nil, TypeInit, InitMsg{Params: map[string]any{}, Symbols: []string{"A"}, Cash: 1000,
		Artifacts: t.TempDir(), BudgetMS: 60_000})
	if err != nil {
		t.Fatal(err)
	}
	w.send(frame)
	w.next(TypeReady)
	t0 := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC).UnixNano()
	bars := Columns{Time: []int64{t0, t0 + 60e9, t0 + 120e9, t0 + 180e9}, Symbol: []int32{0, 0, 0, 0},
		Open: []float64{1, 2, 3, 4}, High: []float64{1, 2, 3, 4}, Low: []float64{1, 2, 3, 4}, Close: []float64{1, 2, 3, 4},
		Volume: []float64{1, 1, 1, 1}}
	frame, err = AppendBatch(nil, 1, 0, nil, bars, 1)
	if err != nil {
		t.Fatal(err)
	}
	w.send(frame)
	return w
}

// prompt reads the debugger's next frame, which must be a prompt.
func (w *worker) prompt() *DebugPromptMsg {
	w.t.Helper()
	f, err := w.debugOut.Next()
	if err != nil {
		w.t.Fatal(err)
	}
	if f.Type != DebugPrompt {
		w.t.Fatalf("debugger frame %q, want a prompt: %s", f.Type, f.Payload)
	}
	m, err := DecodeDebugPrompt(f.Payload)
	if err != nil {
		w.t.Fatal(err)
	}
	return m
}

func (w *worker) command(line string) {
	w.t.Helper()
	if _, err := w.debugIn.Write(AppendDebugLine(nil, line)); err != nil {
		w.t.Fatal(err)
	}
}

func (w *worker) resumed() string {
	w.t.Helper()
	f, err := w.debugOut.Next()
	if err != nil || f.Type != DebugResumed {
		w.t.Fatalf("debugger frame %q (%v), want resumed: %s", f.Type, err, f.Payload)
	}
	m, err := DecodeDebugResumed(f.Payload)
	if err != nil {
		w.t.Fatal(err)
	}
	return m.How
}

// TestBridgeDebuggerPrompt: breakpoint() stops at a prompt on the
// debugger's pipe, with the source, the stack (the bridge's frames left
// out) and the locals; p, n and c do what pdb does; the time at the prompt
// is not in the call's duration.
func TestBridgeDebuggerPrompt(t *testing.T) {
	w := debugWorker(t, nil)
	p := w.prompt()
	if !strings.HasSuffix(p.File, "debug_strategy.py") || p.Line != 7 || p.Function != "on_data" {
		t.Fatalf("stopped at %s:%d in %s", p.File, p.Line, p.Function)
	}
	if !strings.Contains(p.Output, "-> seen = n * 10") {
		t.Errorf("output %q", p.Output)
	}
	if len(p.Stack) != 1 || !p.Stack[0].Current || !p.Stack[0].User || p.Stack[0].Function != "on_data" {
		t.Errorf("stack %+v: want on_data alone", p.Stack)
	}
	var src []string
	for _, l := range p.Source {
		src = append(src, l.Text)
	}
	if !strings.Contains(strings.Join(src, "\n"), "        breakpoint()") {
		t.Errorf("source %q", src)
	}
	locals := map[string]string{}
	for _, l := range p.Locals {
		locals[l.Name] = l.Value
	}
	if locals["n"] != "3" || locals["history"] != "<history 3 bars>" {
		t.Errorf("locals %v", locals)
	}
	time.Sleep(300 * time.Millisecond) // time at the prompt: not the call's
	w.command("p len(history)")
	if p = w.prompt(); strings.TrimSpace(p.Output) != "3" {
		t.Errorf("p len(history): %q", p.Output)
	}
	w.command("n")
	if how := w.resumed(); how != "step" {
		t.Errorf("resumed %q after n", how)
	}
	if p = w.prompt(); p.Line != 8 {
		t.Errorf("after n, at line %d, want 8", p.Line)
	}
	w.command("c")
	if how := w.resumed(); how != "continue" {
		t.Errorf("resumed %q after c", how)
	}
	y, _ := w.yield()
	if y.Through != 4 {
		t.Fatalf("yield %+v", y)
	}
	if d := time.Duration(y.Durations[2]); d >= 300*time.Millisecond {
		t.Errorf("the stopped call took %s: the time at the prompt was counted", d)
	}
}
