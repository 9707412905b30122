package engine

import (
	"encoding/json"
	"time"
)

// Job statuses. A job is "running" on disk until its final report replaces the first one.
const (
	StatusRunning = "running"
	StatusPassed  = "passed"
	StatusFailed  = "failed"
	StatusStopped = "stopped"
)

// Failure kinds (DESIGN §5).
const (
	KindTimeout   = "timeout"
	KindMemory    = "memory"
	KindProcesses = "processes"
	KindProtocol  = "protocol"
	KindException = "exception"
	KindCrash     = "crash"
)

// Hook names as they appear in reports.
const (
	HookStartup     = "startup"
	HookOnData      = "on_data"
	HookOnExecution = "on_execution"
	HookOnFinish    = "on_finish"
)

// Report is the job report of DESIGN §5: printed by --ci --output json, shown by
// status --output json and stored as job.json.
type Report struct {
	JobID             string           `json:"job_id"`
	Status            string           `json:"status"`
	Engine            string           `json:"engine"`
	Strategy          StrategyInfo     `json:"strategy"`
	Data              DataInfo         `json:"data"`
	Python            PythonInfo       `json:"python"`
	Limits            LimitsReport     `json:"limits"`
	Hooks             map[string]Stats `json:"hooks"`
	Failure           *Failure         `json:"failure"`
	Resources         Resources        `json:"resources"`
	Logs              LogsInfo         `json:"logs"`
	CommandsDiscarded int              `json:"commands_discarded"`
	Metrics           json.RawMessage  `json:"metrics"`
	Metadata          json.RawMessage  `json:"metadata"`
	Fingerprint       string           `json:"fingerprint"`
	OrdersHash        string           `json:"orders_hash"`
	StartedAt         time.Time        `json:"started_at"`
	FinishedAt        *time.Time       `json:"finished_at"`
	DurationMS        int64            `json:"duration_ms"`
	SaveErrors        []string         `json:"save_errors,omitempty"` // what of the job folder could not be written; see Job.Wait
}

// StrategyInfo identifies the strategy file that ran and the params it got.
type StrategyInfo struct {
	Path   string         `json:"path"`
	SHA256 string         `json:"sha256"`
	Params map[string]any `json:"params"`
}

// DataInfo describes the events a job replayed.
type DataInfo struct {
	Source  string   `json:"source"`
	From    string   `json:"from"`
	To      string   `json:"to"`
	Events  int      `json:"events"`
	Symbols []string `json:"symbols"`
}

// PythonInfo describes the interpreter that ran the worker.
type PythonInfo struct {
	Executable string `json:"executable"`
	Version    string `json:"version"`
	Sandbox    bool   `json:"sandbox"`
}

// LimitsReport is the limits block of the report, in the units DESIGN §5 uses.
type LimitsReport struct {
	StartupS     float64 `json:"startup_s"`
	OnDataS      float64 `json:"on_data_s"`
	OnExecutionS float64 `json:"on_execution_s"`
	OnFinishS    float64 `json:"on_finish_s"`
	MemoryBytes  int64   `json:"memory_bytes"`
	Processes    int     `json:"processes"`
	MessageBytes int     `json:"message_bytes"`
	LogBytes     int64   `json:"log_bytes"`
}

// Stats summarises the calls of one hook. Durations are measured in the worker
// around the call.
type Stats struct {
	Count    int     `json:"count"`
	Failures int     `json:"failures"`
	TotalMS  float64 `json:"total_ms"`
	P50MS    float64 `json:"p50_ms"`
	P95MS    float64 `json:"p95_ms"`
	MaxMS    float64 `json:"max_ms"`
}

// Failure records why a run failed. EventIndex and EventTime are nil when no
// event was being handled (startup, on_finish).
type Failure struct {
	Kind       string  `json:"kind"`
	Hook       string  `json:"hook"`
	Message    string  `json:"message"`
	Traceback  string  `json:"traceback"`
	Frames     []Frame `json:"frames,omitempty"`
	EventIndex *int    `json:"event_index"`
	EventTime  *string `json:"event_time"`
}

// Frame is one frame of a Python traceback. User marks frames of the
// strategy's own files (the strategy's folder), as opposed to the standard
// library, site-packages and the bridge.
type Frame struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Function string `json:"function"`
	Source   string `json:"source"`
	User     bool   `json:"user"`
}

// Resources are the peaks the supervisor saw over the whole process tree.
type Resources struct {
	PeakMemoryBytes int64 `json:"peak_memory_bytes"`
	PeakProcesses   int   `json:"peak_processes"`
	// TreeTracking says how the tree's membership was known: "pidns" (a
	// PID namespace of its own, a kernel fact) or "fallback" (namespaces
	// were refused; see supervisor.TreeTracking). Empty when no worker ran.
	TreeTracking string `json:"tree_tracking,omitempty"`
}

// LogsInfo describes the captured Python output.
type LogsInfo struct {
	Bytes     int64 `json:"bytes"`
	Truncated bool  `json:"truncated"`
}
