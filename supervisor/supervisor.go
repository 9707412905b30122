// Package supervisor runs a command as a supervised process tree: its own
// session and process group, a sampled view of the whole tree (resident memory,
// process count), limits enforced by killing the whole tree, and stdout/stderr
// captured line by line under a byte cap. It knows nothing of Python or hooks.
package supervisor

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// Stream says where a captured line came from.
type Stream uint8

// Streams of captured lines. System lines are the supervisor's own notices
// (the truncation notice).
const (
	Stdout Stream = iota + 1
	Stderr
	System
)

func (s Stream) String() string {
	switch s {
	case Stdout:
		return "stdout"
	case Stderr:
		return "stderr"
	case System:
		return "system"
	}
	return "unknown"
}

// Line is one captured line: valid UTF-8 (invalid bytes replaced), without its
// newline; a line longer than Limits.LineBytes is cut and ends with CutMarker.
type Line struct {
	Time   time.Time
	Stream Stream
	Text   string
}

// CutMarker ends a line that was cut at Limits.LineBytes.
const CutMarker = " … [line cut]"

// Limits are enforced over the whole tree. Zero disables a limit.
type Limits struct {
	MemoryBytes int64 // resident memory summed over the tree
	Processes   int   // live processes in the tree (threads do not count)
	OutputBytes int64 // stdout+stderr bytes kept; the rest is drained and discarded
	LineBytes   int   // longest line kept whole (default 64 KiB)
}

// Spec says what to run and how.
type Spec struct {
	Path       string   // executable, absolute
	Args       []string // argv[1:]
	Env        []string // the complete environment
	Dir        string
	ExtraFiles []*os.File // become fds 3, 4, ... in the child
	Limits     Limits
	// SampleInterval is the sampling period of the tree (default 20 ms).
	SampleInterval time.Duration
	// StateFile, when set, records the tree's processes (pid and start time)
	// so that Sweep can kill them after stratbench itself was killed.
	StateFile string
	// Output receives every captured line, in order per stream, from the
	// supervisor's own goroutines. It must return quickly.
	Output func(Line)
}

// Proc is one live process of the tree.
type Proc struct {
	PID      int
	PPID     int
	RSSBytes int64
	Command  string
}

// Sample is one view of the tree.
type Sample struct {
	Time        time.Time
	MemoryBytes int64 // resident memory summed over the tree, peaks between samples included
	Processes   int
	Procs       []Proc
}

// Violation kinds.
const (
	ViolationMemory    = "memory"
	ViolationProcesses = "processes"
)

// Violation is a limit the tree broke; the supervisor killed the tree for it.
type Violation struct {
	Kind    string
	Limit   int64
	Value   int64
	Message string
	Time    time.Time
}

// Result is how a supervised tree ended.
type Result struct {
	ExitCode        int            // -1 when the root was killed by a signal
	Signal          syscall.Signal // the signal that ended the root, if any
	Violation       *Violation     // set when a limit was broken
	Killed          bool           // Kill was called
	PeakMemoryBytes int64
	PeakProcesses   int
	OutputBytes     int64 // bytes kept
	OutputTruncated bool
}

// Host holds the process-wide state of supervision: stratbench is a child
// subreaper, so orphans of a tree are reparented to it, and the Host
// attributes them to the tree they came from.
type Host struct{}

// NewHost marks every inherited fd from 3 up close-on-exec and makes the
// calling process a child subreaper. Call it once, early in main.
func NewHost() (*Host, error) { return nil, errors.New("supervisor: not implemented") }

// Start starts spec as the root of a new tree. ctx bounds only the start.
func (h *Host) Start(ctx context.Context, spec Spec) (*Process, error) {
	return nil, errors.New("supervisor: not implemented")
}

// Process is a running tree.
type Process struct{}

// PID returns the root's pid.
func (p *Process) PID() int { return 0 }

// Samples delivers the newest sample; older unread samples are replaced. The
// channel is closed when the tree is gone.
func (p *Process) Samples() <-chan Sample { return nil }

// Done is closed when the tree is gone: the root exited (or was killed), every
// other process of the tree was killed and reaped, and output was drained.
func (p *Process) Done() <-chan struct{} { return nil }

// Kill kills every process of the tree, adopted orphans included, and returns
// when none is left. It is safe to call more than once and after Done.
func (p *Process) Kill() {}

// Wait waits for Done and returns the result.
func (p *Process) Wait() Result { return Result{} }

// Swept is one state file of a dead stratbench that Sweep cleaned up.
type Swept struct {
	StateFile string
	Killed    int // processes of that tree that were still alive and were killed
}

// Sweep finds the state files matching glob whose supervising stratbench is
// no longer alive (its pid is gone or belongs to another process), kills the
// processes they record that still exist with the recorded start time, and
// removes the files. State files of a live stratbench are left alone.
func Sweep(glob string) ([]Swept, error) { return nil, errors.New("supervisor: not implemented") }
