package job

import (
	"encoding/json"
	"time"

	"stratbench/contract"
)

// Status is a job's status. A job is "running" on disk until its final
// report replaces the first one.
type Status string

// Job statuses.
const (
	StatusRunning Status = "running"
	StatusPassed  Status = "passed"
	StatusFailed  Status = "failed"
	StatusStopped Status = "stopped"
)

// Report is the job report: printed by --ci --output json, shown by status
// --output json and stored as job.json (docs/report.md lists its
// fields).
type Report struct {
	JobID             string                  `json:"job_id"`
	Status            Status                  `json:"status"`
	Engine            string                  `json:"engine"`
	Strategy          StrategyInfo            `json:"strategy"`
	Data              contract.DataInfo       `json:"data"`
	Market            contract.MarketInfo     `json:"market"`
	Python            PythonInfo              `json:"python"`
	Limits            LimitsReport            `json:"limits"`
	Hooks             map[contract.Hook]Stats `json:"hooks"`
	Failure           *contract.Failure       `json:"failure"`
	Resources         Resources               `json:"resources"`
	Logs              LogsInfo                `json:"logs"`
	CommandsDiscarded int                     `json:"commands_discarded"`
	Metrics           *contract.Metrics       `json:"metrics"` // null until the run ended
	Metadata          json.RawMessage         `json:"metadata"`
	Fingerprint       string                  `json:"fingerprint"`
	OrdersHash        string                  `json:"orders_hash"`
	StartedAt         time.Time               `json:"started_at"`
	FinishedAt        *time.Time              `json:"finished_at"`
	DurationMS        int64                   `json:"duration_ms"`
	SaveErrors        []string                `json:"save_errors,omitempty"` // what of the job folder could not be written; see Job.Wait
	Sweep             *SweepTag               `json:"sweep,omitempty"`       // the sweep this job is a run of; absent for a job of its own
	// Version is the stratbench version that ran the job, an input of the
	// fingerprint. Empty in reports of older versions.
	Version string `json:"stratbench_version,omitempty"`
	// Symbols are each traded symbol's figures, by symbol (docs/report.md);
	// null until the run ended, and in reports of older versions.
	Symbols map[string]contract.SymbolFigures `json:"symbols"`
}

// SweepTag says which run of which sweep a job is. It is not part of the
// fingerprint: a sweep's run and the same run on its own get the same one.
type SweepTag struct {
	ID    string `json:"id"`              // the sweep's id (sw-…)
	Index int64  `json:"index"`           // the combination's index in grid order
	Fold  *int   `json:"fold,omitempty"`  // the walk-forward fold, from 0; absent in a plain sweep
	Phase string `json:"phase,omitempty"` // "train" or "test" in a walk-forward; absent in a plain sweep
}

// StrategyInfo identifies the strategy file that ran and the params it got.
type StrategyInfo struct {
	Path   string         `json:"path"`
	SHA256 string         `json:"sha256"`
	Params map[string]any `json:"params"`
}

// PythonInfo describes the interpreter that ran the worker.
type PythonInfo struct {
	Executable string `json:"executable"`
	Version    string `json:"version"`
	Sandbox    bool   `json:"sandbox"`
}

// LimitsReport is the limits block of the report, in seconds and bytes.
type LimitsReport struct {
	StartupS     float64 `json:"startup_s"`
	OnDataS      float64 `json:"on_data_s"`
	OnExecutionS float64 `json:"on_execution_s"`
	OnFinishS    float64 `json:"on_finish_s"`
	MemoryBytes  int64   `json:"memory_bytes"`
	Processes    int     `json:"processes"`
	Tasks        int     `json:"tasks"` // threads included; 0 in reports of older versions
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

// Resources are the peaks the supervisor saw over the whole process tree.
type Resources struct {
	PeakMemoryBytes int64 `json:"peak_memory_bytes"`
	PeakProcesses   int   `json:"peak_processes"`
	// PeakTasks counts the threads of the tree's processes (Limits.Tasks).
	PeakTasks int `json:"peak_tasks"`
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
