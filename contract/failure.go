package contract

// FailureKind says why a run failed; docs/limits.md ("Failures")
// describes each.
type FailureKind string

// Failure kinds.
const (
	KindTimeout   FailureKind = "timeout"
	KindMemory    FailureKind = "memory"
	KindProcesses FailureKind = "processes"
	KindProtocol  FailureKind = "protocol"
	KindException FailureKind = "exception"
	KindCrash     FailureKind = "crash"
	// KindData: a bad bar met while the data streamed (the message names
	// the file, the row or line, and the column). Bad input, like bad data
	// found before the run: the command exits with status 2.
	KindData FailureKind = "data"
)

// Failure records why a run failed: the report's "failure". EventIndex and
// EventTime are nil when no event was being handled (startup, on_finish).
// A driver returns one from Drive for a failure of the strategy it detects
// itself; the engine returns one for everything else.
type Failure struct {
	Kind       FailureKind `json:"kind"`
	Hook       Hook        `json:"hook"`
	Message    string      `json:"message"`
	Traceback  string      `json:"traceback"`
	Frames     []Frame     `json:"frames,omitempty"`
	EventIndex *int        `json:"event_index"`
	EventTime  *string     `json:"event_time"`
}

// Error implements error so that a *Failure travels through Driver.Drive.
func (f *Failure) Error() string { return string(f.Kind) + " in " + string(f.Hook) + ": " + f.Message }

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
