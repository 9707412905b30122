package job

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"stratbench/contract"
)

// Event is one item of a job's event stream. The TUI and the --ci printer
// consume the same stream; every event names its job so that a consumer can
// drop the late events of a job it has moved on from.
type Event interface {
	Job() string
}

// JobStarted is the first event of every job.
type JobStarted struct {
	JobID     string
	Dir       string // the job folder
	Strategy  string // absolute path of the strategy file
	Sandbox   bool
	Limits    Limits
	Events    int // events the job will replay
	StartedAt time.Time
	Data      contract.DataInfo   // what the job replays
	Market    contract.MarketInfo // the market settings it replays against
}

// WorkerReady follows JobStarted once the worker has imported the strategy and
// reported its manifest.
type WorkerReady struct {
	JobID  string
	Python PythonInfo
	Hooks  []contract.Hook // hooks the strategy defines
	Params map[string]any
	// History is the bars of history the MANIFEST asks for (its
	// "history", 100 by default).
	History int
}

// HookStats is a snapshot of one hook's statistics, published after the worker
// yields (at most a few times per second while a run streams bars).
type HookStats struct {
	JobID   string
	Hook    contract.Hook
	Stats   Stats
	Limit   time.Duration
	Recent  []time.Duration // the most recent call durations, oldest first (at most 64)
	Slowest []Call          // the slowest calls so far, slowest first (at most 5)
}

// Call is one hook call, for the slowest-calls list.
type Call struct {
	Duration   time.Duration
	EventIndex int       // -1 when no event applies (on_finish)
	EventTime  time.Time // zero when no event applies
}

// ResourceSample is the supervisor's latest view of the worker's process tree.
type ResourceSample struct {
	JobID           string
	Time            time.Time
	MemoryBytes     int64
	PeakMemoryBytes int64
	Processes       int
	PeakProcesses   int
	Tasks           int // threads of the live processes
	PeakTasks       int
	Procs           []Proc
	TreeTracking    string // "pidns" or "fallback", as in Resources
}

// Proc is one live process of the worker's tree.
type Proc struct {
	PID      int
	PPID     int
	RSSBytes int64
	Command  string
}

// LogLines carries log lines in arrival order. Lines are batched: a consumer
// that falls behind receives fewer, larger batches, never an unbounded queue.
type LogLines struct {
	JobID string
	Lines []LogLine
	// Dropped counts lines that were not delivered to this consumer because
	// it fell behind; they are still in logs.jsonl.
	Dropped int
}

// LogLine is one line of Python output or one system notice, as stored in
// logs.jsonl.
type LogLine struct {
	Time   time.Time `json:"t"`
	Stream string    `json:"stream"` // "stdout", "stderr" or "system"
	Line   string    `json:"line"`
}

// Progress reports how far the replay has come.
type Progress struct {
	JobID      string
	Done       int // events handled by on_data
	Total      int
	BarsPerSec float64
	ETA        time.Duration // zero when unknown
	// Running is the hook call that has been running for a while (a
	// quarter of a second or more) when the progress was taken; nil when
	// none has.
	Running *RunningCall
}

// RunningCall is a hook call in flight, as the host sees it: which hook and
// event (the worker's clock names the call), and how long it has run
// against its limit (the host's clock, from when it saw the call start).
type RunningCall struct {
	Hook       contract.Hook
	EventIndex int // -1 when no event applies (startup, on_finish)
	Elapsed    time.Duration
	Limit      time.Duration
}

// Finished is the last event of every job: the final report (also written to
// job.json) and a display-sized equity curve. When the job could not run at
// all (Err is a *UsageError, such as an undeclared --param), Report is nil and
// no job folder is kept.
type Finished struct {
	JobID  string
	Report *Report
	Equity []float64 // downsampled equity curve, oldest first; nil when no bar ran
	Err    error
}

// DebugStop says the worker stopped at the debugger's prompt, and waits for
// a command (DebugConsole): at breakpoint(), at a breakpoint the workbench
// set, or after a step. Only a job started for the workbench stops
// (engine.Config.Debug); elsewhere breakpoint() writes a notice to the log.
// Where and what it shows are the worker's own account (python/debug.go):
// shown, never trusted. Hook and EventIndex are the host's: the hook in
// flight and its event (-1 when none applies).
type DebugStop struct {
	JobID      string        `json:"job_id"`
	Seq        int           `json:"seq"` // the prompt's number in the job: DebugConsole names it
	Hook       contract.Hook `json:"hook"`
	EventIndex int           `json:"event_index"`
	File       string        `json:"file"` // the frame the prompt looks at (up and down move it)
	Line       int           `json:"line"`
	Function   string        `json:"function"`
	Source     []DebugSource `json:"source"` // the lines around Line
	Stack      []DebugFrame  `json:"stack"`  // outermost first; the bridge's own frames left out
	Locals     []DebugLocal  `json:"locals"` // the frame's, their values as repr() shows them, cut
	Output     string        `json:"output"` // what the debugger printed since the last command
}

// DebugSource is one line of the source around a stop.
type DebugSource struct {
	Line  int    `json:"line"`
	Text  string `json:"text"`
	Break bool   `json:"break,omitempty"` // a breakpoint is set on it
}

// DebugFrame is one frame of a stop's stack.
type DebugFrame struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Function string `json:"function"`
	Current  bool   `json:"current,omitempty"` // the frame the prompt looks at
	User     bool   `json:"user,omitempty"`    // a frame of the strategy's own files
}

// DebugLocal is one local variable at a stop.
type DebugLocal struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// DebugResumed says the worker left the prompt of stop Seq and runs again:
// Step when a command asked for a step (n, s, r, until): it stops again
// soon; otherwise it runs on (c, q), stopping only at a breakpoint.
type DebugResumed struct {
	JobID string `json:"job_id"`
	Seq   int    `json:"seq"`
	Step  bool   `json:"step"`
}

// DebugConsole is the prompt of a job's debugger, as the workbench answers
// it: an *engine.Job started with Config.Debug satisfies it.
type DebugConsole interface {
	// DebugWaiting tells the job that the prompt of stop seq is on screen
	// and waits for a person: from then until DebugSend (or the run's
	// stop), the hook's time limit is paused. The memory and process
	// limits keep running, and so does the idle limit (Limits.DebugIdle).
	// It pauses nothing when the worker is not at that prompt.
	DebugWaiting(seq int)
	// DebugSend sends a command line typed at the prompt of stop seq (a
	// pdb command: n, s, c, p EXPR, where, up, down, b FILE:LINE, ...).
	DebugSend(seq int, line string) error
}

// Breakpoint is a place the workbench asks its next runs to stop at,
// without editing the file: a line of a file, and an optional condition (a
// Python expression, evaluated in the frame; it stops when true).
type Breakpoint struct {
	File string
	Line int
	Cond string
}

// The bounds of the breakpoints a run is given: they travel to the worker
// before it starts, in one message of bounded size (python/debug.go has
// the same numbers).
const (
	MaxBreakpoints    = 32
	MaxBreakpointCond = 256
	MaxBreakpointPath = 1024
)

// Check says what is wrong with b as a breakpoint a run can be given; nil
// when nothing is.
func (b Breakpoint) Check() error {
	switch {
	case b.File == "" || len(b.File) > MaxBreakpointPath || !utf8.ValidString(b.File) || hasControl(b.File):
		return fmt.Errorf("a breakpoint's file is a path of at most %d bytes", MaxBreakpointPath)
	case b.Line < 1:
		return fmt.Errorf("a breakpoint's line is a line number, not %d", b.Line)
	case len(b.Cond) > MaxBreakpointCond || !utf8.ValidString(b.Cond) || hasControl(b.Cond):
		return fmt.Errorf("a breakpoint's condition is one line of at most %d bytes", MaxBreakpointCond)
	}
	return nil
}

// hasControl reports whether s holds a control character other than tab.
func hasControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0) }) >= 0
}

// Job implementations.
func (e JobStarted) Job() string     { return e.JobID }
func (e WorkerReady) Job() string    { return e.JobID }
func (e HookStats) Job() string      { return e.JobID }
func (e ResourceSample) Job() string { return e.JobID }
func (e LogLines) Job() string       { return e.JobID }
func (e Progress) Job() string       { return e.JobID }
func (e Finished) Job() string       { return e.JobID }
func (e DebugStop) Job() string      { return e.JobID }
func (e DebugResumed) Job() string   { return e.JobID }
