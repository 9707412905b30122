package session

import (
	"context"
	"fmt"

	"stratbench/data"
	"stratbench/engine"
	"stratbench/job"
	"stratbench/sandbox"
	"stratbench/supervisor"
)

// Window is the replay window and timeframe of a command's run flags, as
// given (data.ParseWindow reads them).
type Window struct{ From, To, Timeframe string }

// PolicyError is a refusal of the environment's policies (a data budget,
// STRATBENCH_PYTHON_SANDBOX) or of a sandbox that the system cannot make:
// bad input.
type PolicyError struct{ Err error }

func (e *PolicyError) Error() string { return e.Err.Error() }
func (e *PolicyError) Unwrap() error { return e.Err }

// OpenUnder opens a command's session (Open) under the policies, applied
// in this order: the supervisor's host first (no descriptor stratbench
// inherited may reach a child, the interpreter's probe included), the
// home's store (store opens it), the window (its refusal handed to
// cfg.Input), the data's budgets, the sandbox requirement, and the
// sandbox's check when the runs are sandboxed. cfg's Host, Store and
// Options are filled here; cfg.Sandbox is set when the environment
// requires it.
func OpenUnder(ctx context.Context, cfg Config, w Window, store func() (*job.Store, error),
	beforeProbe func(ctx context.Context, s *Session, py *engine.Interpreter)) (*Session, error) {
	host, err := supervisor.NewHost()
	if err != nil {
		return nil, err
	}
	if cfg.Store, err = store(); err != nil {
		return nil, err
	}
	window, err := data.ParseWindow(w.From, w.To)
	if err != nil {
		return nil, cfg.Input(err)
	}
	budget, spill, err := Budgets()
	if err != nil {
		return nil, &PolicyError{err}
	}
	required, err := SandboxRequired()
	if err != nil {
		return nil, &PolicyError{err}
	}
	cfg.Sandbox = cfg.Sandbox || required
	if cfg.Sandbox {
		if err := sandbox.Check(); err != nil {
			return nil, &PolicyError{fmt.Errorf("refusing to run: %w", err)}
		}
	}
	cfg.Host = host
	cfg.Options = data.Options{Window: window, Budget: budget, SpillBudget: spill, Timeframe: w.Timeframe}
	return Open(ctx, cfg, beforeProbe)
}
