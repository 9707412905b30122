package engine

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"stratbench/contract"
	"stratbench/job"
	"stratbench/python"
	"stratbench/sandbox"
)

// debugLimits are short limits for the debugger's tests: a second per
// on_data call, so that a prompt held longer than that proves the pause.
func debugLimits() job.Limits {
	l := shortLimits()
	l.OnData = time.Second
	l.DebugIdle = time.Minute
	return l
}

// holdPast is how long the tests hold a prompt: longer than debugLimits'
// on_data limit and its slack.
const holdPast = 1500 * time.Millisecond

// console answers the debugger's prompts as a person at the workbench
// would: at each stop it says it waits, then answers with the next of its
// commands; the stops and resumes are recorded.
type console struct {
	t        *testing.T
	commands []string
	hold     time.Duration // before the first command
	grant    bool          // say the prompt waits (DebugWaiting)
	stops    []job.DebugStop
	resumes  []job.DebugResumed
}

func (c *console) during(j *Job, e job.Event) {
	switch e := e.(type) {
	case job.DebugStop:
		c.stops = append(c.stops, e)
		if c.grant {
			j.DebugWaiting(e.Seq)
		}
		if len(c.stops) == 1 {
			time.Sleep(c.hold) // a person reading the screen
		}
		if len(c.commands) == 0 {
			return
		}
		cmd := c.commands[0]
		c.commands = c.commands[1:]
		if err := j.DebugSend(e.Seq, cmd); err != nil {
			c.t.Errorf("send %q at stop %d: %v", cmd, e.Seq, err)
		}
	case job.DebugResumed:
		c.resumes = append(c.resumes, e)
	}
}

func withDebug(d *Debug) func(*Config) { return func(c *Config) { c.Debug = d } }

// TestDebugStopsAndResumes: breakpoint() at bar 100 stops the worker at a
// prompt the host publishes (where, the source, the stack, the locals);
// p, n and c do what pdb does; the prompt held past the on_data limit is
// not charged (the pause the console asked for), the hook's statistics do
// not count it, and the run gives the same orders as without a debugger.
// Without the pause (the watchdog's credit) it times out.
func TestDebugStopsAndResumes(t *testing.T) {
	testDebugStopsAndResumes(t, false)
}

// TestDebugSandboxed: the same in the sandbox, where the debugger's pipes
// are two of the descriptors the worker keeps.
func TestDebugSandboxed(t *testing.T) {
	if err := sandbox.Check(); err != nil {
		t.Skip(err)
	}
	testDebugStopsAndResumes(t, true)
}

func testDebugStopsAndResumes(t *testing.T, sandboxed bool) {
	plain := newReplay(300, 1)
	runStrategyWith(t, "debug_breakpoint.py", debugLimits(), plain, func(c *Config) { c.Sandbox = sandboxed })

	c := &console{t: t, commands: []string{"p len(history)", "n", "where", "c"}, hold: holdPast, grant: true}
	d := newReplay(300, 1)
	r := runStrategyOpts(t, "debug_breakpoint.py", debugLimits(), d, c.during, func(cfg *Config) {
		cfg.Sandbox, cfg.Debug = sandboxed, &Debug{}
	})
	if r.report.Status != job.StatusPassed {
		t.Fatalf("status %s, failure %+v", r.report.Status, r.report.Failure)
	}
	if len(c.stops) != 4 {
		t.Fatalf("%d stops, want 4 (breakpoint, p, n, where): %+v", len(c.stops), c.stops)
	}
	first := c.stops[0]
	if filepath.Base(first.File) != "debug_breakpoint.py" || first.Line != 10 || first.Function != "on_data" ||
		first.Hook != contract.HookOnData || first.EventIndex != 99 {
		t.Errorf("stopped at %s:%d in %s, hook %s event %d; want debug_breakpoint.py:10 in on_data at event 99",
			first.File, first.Line, first.Function, first.Hook, first.EventIndex)
	}
	if !strings.Contains(first.Output, "-> step = len(history) % 50") {
		t.Errorf("first output %q", first.Output)
	}
	if len(first.Stack) != 1 || !first.Stack[0].User || !first.Stack[0].Current {
		t.Errorf("stack %+v: the strategy's frame alone", first.Stack)
	}
	if got := localsOf(first)["history"]; got != "<history 100 bars>" {
		t.Errorf("history is %q at the stop", got)
	}
	if got := strings.TrimSpace(c.stops[1].Output); got != "100" {
		t.Errorf("p len(history) printed %q, want 100", got)
	}
	if c.stops[2].Line != 11 {
		t.Errorf("n went to line %d, want 11", c.stops[2].Line)
	}
	if !strings.Contains(c.stops[3].Output, "debug_breakpoint.py(11)on_data()") || strings.Contains(c.stops[3].Output, "stratbench_bridge") {
		t.Errorf("where printed %q: the strategy's frame, not the bridge's", c.stops[3].Output)
	}
	if want := []job.DebugResumed{{JobID: r.report.JobID, Seq: 2, Step: true}, {JobID: r.report.JobID, Seq: 4}}; !reflect.DeepEqual(c.resumes, want) {
		t.Errorf("resumed %+v, want %+v", c.resumes, want)
	}
	if !reflect.DeepEqual(d.commands, plain.commands) || len(d.commands) != 6 {
		t.Errorf("commands %+v with the debugger, %+v without", d.commands, plain.commands)
	}
	if max := r.report.Hooks[contract.HookOnData].MaxMS; max >= float64(holdPast.Milliseconds()) {
		t.Errorf("on_data's slowest call took %.0f ms: the time at the prompt was counted", max)
	}
}

func localsOf(s job.DebugStop) map[string]string {
	out := map[string]string{}
	for _, l := range s.Locals {
		out[l.Name] = l.Value
	}
	return out
}

// TestDebugPauseNeedsTheWorkbench: a prompt nobody says is on screen
// (DebugWaiting never called) pauses nothing: held past the limit, the call
// times out.
func TestDebugPauseNeedsTheWorkbench(t *testing.T) {
	c := &console{t: t, hold: holdPast}
	r := runStrategyOpts(t, "debug_breakpoint.py", debugLimits(), newReplay(300, 1), c.during, withDebug(&Debug{}))
	f := assertFailure(t, r, contract.KindTimeout, contract.HookOnData)
	if !strings.Contains(f.Message, "did not return within the 1s limit") {
		t.Errorf("message %q", f.Message)
	}
}

// TestDebugIdlePrompt: a prompt left waiting longer than the idle limit
// ends the run, and says so.
func TestDebugIdlePrompt(t *testing.T) {
	l := debugLimits()
	l.DebugIdle = 300 * time.Millisecond
	c := &console{t: t, grant: true}
	r := runStrategyOpts(t, "debug_breakpoint.py", l, newReplay(300, 1), c.during, withDebug(&Debug{}))
	f := assertFailure(t, r, contract.KindTimeout, contract.HookOnData)
	if !strings.Contains(f.Message, "the debugger's prompt waited 300ms without a command") || f.EventIndex == nil || *f.EventIndex != 99 {
		t.Errorf("failure %q at %v", f.Message, f.EventIndex)
	}
}

// TestDebugForgedPromptComputes: a worker that sends a prompt of its own
// making and computes gets no pause, even granted: the host credits only
// time during which the interpreter used almost no CPU. Without that check
// it would run until the idle limit.
func TestDebugForgedPromptComputes(t *testing.T) {
	l := debugLimits()
	l.DebugIdle = 20 * time.Second
	c := &console{t: t, grant: true}
	start := time.Now()
	r := runStrategyOpts(t, "debug_forged_prompt.py", l, newReplay(10, 1), c.during, withDebug(&Debug{}))
	f := assertFailure(t, r, contract.KindTimeout, contract.HookOnData)
	if !strings.Contains(f.Message, "did not return within the 1s limit") {
		t.Errorf("message %q (after %s)", f.Message, time.Since(start))
	}
	if len(c.stops) != 1 || c.stops[0].Output != "(forged)" {
		t.Errorf("stops %+v", c.stops)
	}
}

// TestDebugPipeGarbage: garbage on the debugger's pipe is a protocol
// failure, as on the protocol's: the worker is killed, nothing hangs.
func TestDebugPipeGarbage(t *testing.T) {
	c := &console{t: t, grant: true}
	r := runStrategyOpts(t, "debug_forged_prompt.py", debugLimits(), newReplay(10, 1), c.during, func(cfg *Config) {
		cfg.Strategy = filepath.Join("..", "testdata", "attacks", "debug_pipe.py")
		cfg.Debug = &Debug{}
	})
	f := assertFailure(t, r, contract.KindProtocol, contract.HookOnData)
	if !strings.HasPrefix(f.Message, "debugger channel: ") {
		t.Errorf("message %q", f.Message)
	}
}

// TestDebugConditionalBreakpoint: a breakpoint the workbench sets, with a
// condition, stops only where the condition holds; without the condition
// it stops at every bar.
func TestDebugConditionalBreakpoint(t *testing.T) {
	path, err := filepath.Abs(filepath.Join("..", "testdata", "strategies", "debug_lines.py"))
	if err != nil {
		t.Fatal(err)
	}
	c := &console{t: t, commands: []string{"p len(history)", "c"}, grant: true}
	r := runStrategyOpts(t, "debug_lines.py", debugLimits(), newReplay(300, 1), c.during,
		withDebug(&Debug{Breakpoints: []job.Breakpoint{{File: path, Line: 7, Cond: "len(history) == 150"}}}))
	if r.report.Status != job.StatusPassed {
		t.Fatalf("status %s, failure %+v", r.report.Status, r.report.Failure)
	}
	if len(c.stops) != 2 || c.stops[0].Line != 7 || c.stops[0].EventIndex != 149 || strings.TrimSpace(c.stops[1].Output) != "150" {
		t.Fatalf("stops %+v", c.stops)
	}
	var marked []int
	for _, l := range c.stops[0].Source {
		if l.Break {
			marked = append(marked, l.Line)
		}
	}
	if !reflect.DeepEqual(marked, []int{7}) {
		t.Errorf("lines marked with a breakpoint: %v", marked)
	}

	// Without the condition: every bar.
	c = &console{t: t, commands: []string{"c", "c", "q"}, grant: true}
	r = runStrategyOpts(t, "debug_lines.py", debugLimits(), newReplay(300, 1), c.during,
		withDebug(&Debug{Breakpoints: []job.Breakpoint{{File: path, Line: 7}}}))
	if r.report.Status != job.StatusPassed || len(c.stops) != 3 || c.stops[2].EventIndex != 2 {
		t.Fatalf("status %s, stops %+v (q lets the run go on without stopping again)", r.report.Status, c.stops)
	}
}

// TestDebugStopAtThePrompt: stopping the job while its worker waits at the
// prompt lets the hook go on to its end, runs on_finish, and saves the job
// as stopped.
func TestDebugStopAtThePrompt(t *testing.T) {
	stopped := false
	r := runStrategyOpts(t, "debug_breakpoint.py", debugLimits(), newReplay(300, 1), func(j *Job, e job.Event) {
		if s, ok := e.(job.DebugStop); ok {
			j.DebugWaiting(s.Seq)
			j.Stop()
			stopped = true
		}
	}, withDebug(&Debug{}))
	if !stopped || r.report.Status != job.StatusStopped || r.report.Hooks[contract.HookOnFinish].Count != 1 {
		t.Fatalf("stopped %v, status %s, failure %+v, hooks %+v", stopped, r.report.Status, r.report.Failure, r.report.Hooks)
	}
}

// TestBreakpointWithoutDebugger: without a debugger (--ci, a sweep, Ray),
// breakpoint() called 10,000 times at one place and at 150 places notes
// each place once in the log (100 at most, then one line says so) and the
// run goes on.
func TestBreakpointWithoutDebugger(t *testing.T) {
	r := runStrategy(t, "breakpoint_storm.py", shortLimits(), newReplay(50, 1), nil)
	if r.report.Status != job.StatusPassed {
		t.Fatalf("status %s, failure %+v", r.report.Status, r.report.Failure)
	}
	var here, places, capped int
	for _, l := range readLogs(t, r.dir) {
		switch {
		case strings.Contains(l.Line, "breakpoint() at breakpoint_storm.py:10 goes on"):
			here++
		case strings.Contains(l.Line, "breakpoint() at places.py:"):
			places++
		case strings.Contains(l.Line, "breakpoint() calls at more than 100 places"):
			capped++
		}
	}
	if here != 1 || places != 99 || capped != 1 {
		t.Errorf("notices: %d for the loop's line, %d for places.py, %d cap lines; want 1, 99, 1", here, places, capped)
	}
}

// TestDebugBreakpointsChecked: breakpoints the host cannot pass to the
// worker are refused before anything runs.
func TestDebugBreakpointsChecked(t *testing.T) {
	home := t.TempDir()
	cfg := Config{Strategy: filepath.Join("..", "testdata", "strategies", "noop.py"), Python: findPython(t), Home: home,
		CacheDir: filepath.Join(home, "cache"), Limits: shortLimits(), Version: "test", Host: testHost,
		Debug: &Debug{Breakpoints: []job.Breakpoint{{File: "strategy.py", Line: 3, Cond: "x ==\n1"}}}}
	j, err := Start(context.Background(), cfg, newReplay(10, 1))
	if err != nil {
		t.Fatal(err)
	}
	for range j.Events() {
	}
	if _, err := j.Wait(); err == nil || !strings.Contains(err.Error(), "breakpoint condition") {
		t.Fatalf("error %v, want the condition refused", err)
	}
}

// TestBreakpointBoundsAgree: the bounds the workbench checks breakpoints
// against (job) are those of the message that takes them to the worker
// (python).
func TestBreakpointBoundsAgree(t *testing.T) {
	if job.MaxBreakpoints != python.MaxBreakpoints || job.MaxBreakpointCond != python.MaxBreakpointCond ||
		job.MaxBreakpointPath != python.MaxBreakpointPath {
		t.Fatal("job's and python's breakpoint bounds differ")
	}
}
