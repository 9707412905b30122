// Package workbench is the workbench: a Bubble Tea program that re-runs the strategy
// on every save and shows, live, each run's hook timings, process tree, logs,
// failure and results, and the jobs of this session and earlier ones.
//
// The UI consumes a job's event stream (job.Event values) and reads the
// data model of package job; it never imports the engine, the supervisor,
// the sandbox or the Python side. Starting a run,
// watching the file and storing jobs are given to it through Options.
package workbench

import (
	"context"

	"stratbench/job"
	"stratbench/ui/components"
	"stratbench/watch"
)

// RunHandle is one run of the strategy as the UI sees it. An *engine.Job
// satisfies it, and job.DebugConsole too: a run that does not has no
// debugger (its stops are shown, nothing can answer them).
type RunHandle interface {
	// ID returns the job id; the UI drops events of any other job.
	ID() string
	// Events returns the job's event stream, closed after Finished.
	Events() <-chan job.Event
	// Stop asks the run to stop; on_finish runs and the stream ends.
	Stop()
}

// JobStore is the jobs folder, as the jobs pane reads it. *job.Store
// satisfies it.
type JobStore interface {
	// List returns every job's report, newest first.
	List() ([]*job.Report, error)
	// Load returns one job's report.
	Load(id string) (*job.Report, error)
	// JobDir returns the folder of job id.
	JobDir(id string) string
	// Equity returns job id's equity curve, reduced to at most points
	// values; nil, nil when it has none.
	Equity(id string, points int) ([]float64, error)
	// Logs calls fn for every line of job id's log (follow nil: what is
	// written so far).
	Logs(ctx context.Context, id string, follow job.Follow, fn func(job.LogLine) error) error
}

// Options configure the workbench.
type Options struct {
	// Strategy is the path of strategy.py; the file may not exist yet.
	Strategy string
	// Workspace, when set, is the folder the bundled example was written to;
	// the header shows it.
	Workspace string
	// Example reports that Strategy is the bundled example, just written
	// where the user asked: the footer says what to do with it, as it
	// does for the workspace's.
	Example bool
	// Theme is a name from themes.Names, or "" or "auto" to follow the
	// terminal's background. NO_COLOR overrides it.
	Theme string
	// Sandbox reports whether runs use the sandbox, for the header.
	Sandbox bool
	// Start starts a run on the file's current content, with a debugger
	// that stops at breakpoint() and at breaks (set with b: file, line,
	// condition). An *engine.UsageError is shown to the user; the
	// workbench keeps running.
	Start func(ctx context.Context, breaks []job.Breakpoint) (RunHandle, error)
	// Changes delivers the watcher's reports (watch.Watcher.Changes). Its
	// first report, the file's state at start, starts the first run. When
	// Changes is nil nothing is watched and the first run starts at once.
	Changes <-chan watch.Change
	// Store holds this session's and earlier jobs; nil hides them.
	Store JobStore
	// Editor is the editor e opens: a command that may carry arguments
	// ($VISUAL, $EDITOR), or a template with {file} and {line}
	// (STRATBENCH_EDITOR); empty disables it.
	Editor string
	// Opener opens an artifact file (its path is added as the last
	// argument; the value may carry arguments): $STRATBENCH_OPEN, else
	// xdg-open. Empty shows the path instead.
	Opener string
	// Report writes the HTML report of a finished job (docs/report.md)
	// and returns its path, which o then opens with Opener; nil disables
	// o. It is called off the UI's goroutine.
	Report func(ctx context.Context, jobID string) (path string, err error)
	// Interrupts are stop requests from outside the workbench: the
	// caller's signal policy (app's: the first signal stops, a second
	// kills). Nil means none come.
	Interrupts <-chan components.Interrupt
}
