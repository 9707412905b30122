package job

import (
	"time"

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

// Job implementations.
func (e JobStarted) Job() string     { return e.JobID }
func (e WorkerReady) Job() string    { return e.JobID }
func (e HookStats) Job() string      { return e.JobID }
func (e ResourceSample) Job() string { return e.JobID }
func (e LogLines) Job() string       { return e.JobID }
func (e Progress) Job() string       { return e.JobID }
func (e Finished) Job() string       { return e.JobID }
