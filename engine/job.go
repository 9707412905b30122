package engine

import (
	"context"
	"errors"

	"stratbench/supervisor"
)

// Config is everything a job needs besides its driver.
type Config struct {
	Strategy string            // path of strategy.py
	Python   string            // interpreter as given (--python, $STRATBENCH_PYTHON, ...); resolved by Start
	Params   []string          // --param k=v, in the order given
	Home     string            // $STRATBENCH_HOME
	Limits   Limits            // DefaultLimits() unless a test shortens them
	Sandbox  bool              // run the worker in the sandbox
	Version  string            // stratbench version, for the fingerprint
	Host     *supervisor.Host  // the process-wide supervision state
	Env      map[string]string // extra environment for the worker (tests)
}

// Job is one run of a strategy.
type Job struct{}

// Start creates the job folder, starts the worker and returns at once; the
// run proceeds in the background and reports on Events. A *UsageError means
// the job could not start because of what the user asked for.
func Start(ctx context.Context, cfg Config, d Driver) (*Job, error) {
	return nil, errors.New("engine: not implemented")
}

// ID returns the job id.
func (j *Job) ID() string { return "" }

// Dir returns the job folder.
func (j *Job) Dir() string { return "" }

// Events returns the job's event stream. It ends with Finished and is then closed.
func (j *Job) Events() <-chan Event { return nil }

// Stop asks the job to stop: the hook in flight completes, on_finish runs,
// the worker exits and the job is saved with status "stopped".
func (j *Job) Stop() {}

// Wait waits for the job to end and returns its final report (also in
// job.json). The error is non-nil only when the job could not run at all
// (a *UsageError, or a failure to write the job folder).
func (j *Job) Wait() (*Report, error) { return nil, errors.New("engine: not implemented") }
