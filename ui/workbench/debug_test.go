package workbench

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"stratbench/contract"
	"stratbench/job"
)

// debugRun is a fake run with a debugger: it records what the workbench
// tells it (the prompts it says wait for a person, the commands sent).
type debugRun struct {
	*fakeRun
	mu      sync.Mutex
	waiting []int
	sent    []string
}

func newDebugRun() *debugRun { return &debugRun{fakeRun: newFakeRun(testJob, 0)} }

func (r *debugRun) DebugWaiting(seq int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waiting = append(r.waiting, seq)
}

func (r *debugRun) DebugSend(seq int, line string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, line)
	return nil
}

const debugStrategy = "/home/ana/strategies/strategy.py"

// debugSource is testdata/strategies/debug_breakpoint.py, as a stop there
// shows it.
var debugSource = []string{
	`"""breakpoint() in on_data at bar 100, then lines a step goes through; an`,
	`order every 50 bars, so that the orders say whether a stop changed the run`,
	`(engine/debug_test.go, the workbench's end-to-end test)."""`,
	`MANIFEST = {"history": 500}`,
	``,
	``,
	`def on_data(ctx, history):`,
	`    if len(history) == 100:`,
	`        breakpoint()`,
	`    step = len(history) % 50`,
	`    if step == 0:`,
	`        ctx.buy(ctx.symbol, 1)`,
	``,
	``,
	`def on_finish(ctx):`,
	`    print("on_finish ran")`,
}

// debugStop is the stop the engine publishes for debug_breakpoint.py at
// bar 100 (engine/debug_test.go checks the real one): prompt seq, at line,
// with what the debugger printed.
func debugStop(seq, line int, output string) job.DebugStop {
	s := job.DebugStop{JobID: testJob, Seq: seq, Hook: contract.HookOnData, EventIndex: 99, File: debugStrategy,
		Line: line, Function: "on_data", Output: output,
		Stack: []job.DebugFrame{{File: debugStrategy, Line: line, Function: "on_data", Current: true, User: true}},
		Locals: []job.DebugLocal{
			{Name: "ctx", Value: "<stratbench Context SYNA at 2026-01-05T01:39:00Z>"},
			{Name: "history", Value: "<history 100 bars>"},
		}}
	for i := max(line-5, 1); i <= min(line+5, len(debugSource)); i++ {
		s.Source = append(s.Source, job.DebugSource{Line: i, Text: debugSource[i-1]})
	}
	return s
}

// stoppedAtBreakpoint makes m's live run a debugRun that stopped at
// breakpoint() at bar 100.
func stoppedAtBreakpoint(t *testing.T, m *model) *debugRun {
	t.Helper()
	run := newDebugRun()
	startRun(m, run)
	feed(m, runningEvents(testJob)...)
	feed(m, debugStop(1, 10, "> "+debugStrategy+"(10)on_data()\n-> step = len(history) % 50\n"))
	return run
}

// TestDebugPaneAnswersThePrompt: a stop opens the debug pane, which tells
// the run the prompt waits (the pause) once per prompt; keys go to its
// prompt (q is typed, not quit); enter sends the line; the next stop shows
// what pdb printed; a step keeps the pane, c's resume closes it.
func TestDebugPaneAnswersThePrompt(t *testing.T) {
	m := newTestModel(t, 120, 40)
	run := stoppedAtBreakpoint(t, m)
	if !m.debugOpen() || !slices.Equal(run.waiting, []int{1}) {
		t.Fatalf("open %v, waiting %v: the stop did not open the pane and ask for the pause", m.debugOpen(), run.waiting)
	}
	s := screen(m)
	for _, want := range []string{"DEBUGGING", "Debugger · stopped at strategy.py:10 in on_data · on_data at event #99",
		"→ 10 │     step = len(history) % 50", "history = <history 100 bars>", "(Pdb) ▏", "time limit is paused"} {
		if !strings.Contains(s, want) {
			t.Errorf("the screen lacks %q:\n%s", want, s)
		}
	}

	typeKeys(m, "p len(history)")
	m.Update(press("enter"))
	if !slices.Equal(run.sent, []string{"p len(history)"}) {
		t.Fatalf("sent %q", run.sent)
	}
	if s := screen(m); !strings.Contains(s, "running `p len(history)`…") {
		t.Errorf("no word that the command runs:\n%s", s)
	}
	// A second enter while the worker runs sends nothing.
	m.Update(press("enter"))
	if len(run.sent) != 1 {
		t.Errorf("a command was sent while the worker ran: %q", run.sent)
	}
	feed(m, job.DebugResumed{JobID: testJob, Seq: 1, Step: true})
	feed(m, debugStop(2, 10, "100\n"))
	if !slices.Equal(run.waiting, []int{1, 2}) || !strings.Contains(screen(m), "┃100 ") {
		t.Errorf("waiting %v; the screen:\n%s", run.waiting, screen(m))
	}

	typeKeys(m, "q")
	m.Update(press("backspace"))
	typeKeys(m, "c")
	m.Update(press("enter"))
	if !m.debugOpen() || !slices.Equal(run.sent, []string{"p len(history)", "c"}) {
		t.Fatalf("q quit or was sent: open %v, sent %q", m.debugOpen(), run.sent)
	}
	feed(m, job.DebugResumed{JobID: testJob, Seq: 2})
	if m.debugOpen() {
		t.Fatal("the pane stayed open after the run resumed")
	}
	if s := screen(m); !strings.Contains(s, "the run goes on from strategy.py:10") || !strings.Contains(s, "RUNNING") {
		t.Errorf("after c:\n%s", s)
	}
}

// TestDebugPaneStopAndEnd: s is typed at the prompt, not a stop; the run
// ending closes the pane; a stop of another job opens nothing.
func TestDebugPaneStopAndEnd(t *testing.T) {
	m := newTestModel(t, 120, 40)
	run := stoppedAtBreakpoint(t, m)
	typeKeys(m, "s")
	if run.stops() != 0 || m.live.debug.input.String() != "s" {
		t.Fatalf("s at the prompt: stops %d, input %q", run.stops(), m.live.debug.input.String())
	}
	feed(m, job.Finished{JobID: testJob})
	if m.debugOpen() {
		t.Error("the pane stayed open after the run ended")
	}
	feed(m, job.DebugStop{JobID: "another", Seq: 1})
	if m.debugOpen() {
		t.Error("another job's stop opened the pane")
	}
}

// TestBreakpointKeyWithCondition: b on the failure pane's selected frame
// asks for a condition in the footer; enter sets the breakpoint there with
// it, the header shows it, and the next run gets it (Options.Start); b on
// the same frame removes it, B clears them all.
func TestBreakpointKeyWithCondition(t *testing.T) {
	m := newTestModel(t, 120, 40)
	live(t, m, "failed-exception", true)
	m.setFocus(paneFailure)
	fr, ok := m.view().failure.selected()
	if !ok {
		t.Fatal("no frame of the strategy selected")
	}
	m.Update(press("b"))
	if !m.prompt.open || !strings.Contains(screen(m), "condition (a Python expression") {
		t.Fatalf("b asked for no condition:\n%s", screen(m))
	}
	typeKeys(m, "len(history) == 150")
	m.Update(press("enter"))
	want := []job.Breakpoint{{File: fr.File, Line: fr.Line, Cond: "len(history) == 150"}}
	if !slices.Equal(m.breaks.list, want) {
		t.Fatalf("breakpoints %+v, want %+v", m.breaks.list, want)
	}
	if s := screen(m); !strings.Contains(s, "● strategy.py:6 if len(history) == 150") {
		t.Errorf("the header does not show the breakpoint:\n%s", s)
	}
	var got []job.Breakpoint
	m.opts.Start = func(_ context.Context, breaks []job.Breakpoint) (RunHandle, error) {
		got = breaks
		return newFakeRun(testJob, 0), nil
	}
	m.startCmd(m.gen + 1)()
	if !slices.Equal(got, want) {
		t.Errorf("the next run got %+v", got)
	}

	// esc at the condition's prompt sets nothing.
	m2 := newTestModel(t, 120, 40)
	live(t, m2, "failed-exception", true)
	m2.setFocus(paneFailure)
	m2.Update(press("b"))
	m2.Update(press("esc"))
	if len(m2.breaks.list) != 0 || m2.prompt.open {
		t.Errorf("esc set %+v", m2.breaks.list)
	}

	m.Update(press("b"))
	if len(m.breaks.list) != 0 {
		t.Errorf("b on a marked line left %+v", m.breaks.list)
	}
	m.breaks.list = append(m.breaks.list, want...)
	m.Update(press("B"))
	if len(m.breaks.list) != 0 {
		t.Errorf("B left %+v", m.breaks.list)
	}
}

// TestSourceViewBreakpoint: v opens the strategy's source at the selected
// frame; j moves the cursor; b sets a breakpoint on its line (enter: no
// condition) and ● marks it; esc closes.
func TestSourceViewBreakpoint(t *testing.T) {
	m := newTestModel(t, 120, 40)
	openSourceAt(t, m, 7)
	m.Update(press("j"))
	m.Update(press("b"))
	m.Update(press("enter"))
	if want := []job.Breakpoint{{File: debugStrategy, Line: 8}}; !slices.Equal(m.breaks.list, want) {
		t.Fatalf("breakpoints %+v, want %+v", m.breaks.list, want)
	}
	if s := screen(m); !strings.Contains(s, "●›  8 │     if len(history) == 100:") {
		t.Errorf("the line is not marked:\n%s", s)
	}
	m.Update(press("esc"))
	if m.source.open {
		t.Error("esc did not close the source view")
	}
}

// openSourceAt opens the source view on debugSource with the cursor on
// line, as v and the file's read would.
func openSourceAt(t *testing.T, m *model, line int) {
	t.Helper()
	m.Update(press("v"))
	if !m.source.open {
		t.Fatal("v opened no source view")
	}
	m.Update(sourceLoadedMsg{file: debugStrategy, lines: debugSource, line: line})
}

// debugStates are the debugger's golden screens (paneStates has them).
func debugStates() []paneState {
	return []paneState{
		{"debug-stopped", func(t *testing.T, m *model) { stoppedAtBreakpoint(t, m) }},
		{"debug-answered", func(t *testing.T, m *model) {
			stoppedAtBreakpoint(t, m)
			typeKeys(m, "p len(history)")
			m.Update(press("enter"))
			feed(m, job.DebugResumed{JobID: testJob, Seq: 1, Step: true})
			feed(m, debugStop(2, 10, "100\n"))
			typeKeys(m, "n")
		}},
		{"debug-running", func(t *testing.T, m *model) {
			stoppedAtBreakpoint(t, m)
			typeKeys(m, "n")
			m.Update(press("enter"))
			feed(m, job.DebugResumed{JobID: testJob, Seq: 1, Step: true})
		}},
		{"breakpoint-condition", func(t *testing.T, m *model) {
			live(t, m, "failed-exception", true)
			m.setFocus(paneFailure)
			m.Update(press("b"))
			typeKeys(m, "len(history) == 150")
		}},
		{"source-view", func(t *testing.T, m *model) {
			m.breaks.list = []job.Breakpoint{{File: debugStrategy, Line: 10, Cond: "len(history) == 150"}}
			openSourceAt(t, m, 8)
		}},
	}
}
