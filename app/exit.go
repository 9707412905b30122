package app

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"stratbench/engine"
	"stratbench/internal/shortid"
	"stratbench/internal/signals"
	"stratbench/job"
	"stratbench/sweep"
)

// Exit codes (docs/commands.md, "Exit codes and signals").
const (
	ExitPassed  = 0   // the run passed
	ExitFailed  = 1   // the strategy failed, or its job could not be saved in full
	ExitUsage   = 2   // bad usage or bad input
	ExitSIGHUP  = 129 // stopped by SIGHUP (the terminal closed)
	ExitSIGINT  = 130 // stopped by SIGINT
	ExitSIGPIPE = 141 // stopped because the output's reader went away (see signals.Policy.WatchOutput)
	ExitSIGTERM = 143 // stopped by SIGTERM
)

// ExitError carries an exit code, and what to say on stderr, out of a command.
type ExitError struct {
	Code int
	Err  error // printed to stderr unless nil
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// usage is a bad-usage or bad-input error: exit code 2.
func usage(err error) error { return &ExitError{Code: ExitUsage, Err: err} }

// failed is exit code 1 with nothing more to say (the report said it).
func failed() error { return &ExitError{Code: ExitFailed} }

// ExitCode maps a command's error to the process's exit code and what to
// print on stderr (nil for nothing). An error that is no *ExitError is the
// command line parser's (an unknown flag, a missing argument): bad usage.
func ExitCode(err error) (int, error) {
	if err == nil {
		return ExitPassed, nil
	}
	if outputGone(err) {
		// `stratbench jobs | head -1`: the reader has what it wanted. As
		// the SIGPIPE the runtime would have raised on fd 1 or 2, without
		// a word (the commands that run jobs stop them first:
		// signals.Policy.WatchOutput).
		return ExitSIGPIPE, nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err == nil {
			return ee.Code, nil
		}
		return ee.Code, err // with the context it was wrapped in
	}
	return ExitUsage, err
}

// outputGone reports whether err is a write to stdout or stderr whose
// reader went away (StdStreams writes through copies of fds 1 and 2,
// named as they are): not a worker's pipe, whose EPIPE is its end.
func outputGone(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && errors.Is(pe.Err, syscall.EPIPE) && (pe.Path == os.Stdout.Name() || pe.Path == os.Stderr.Name())
}

// asExit maps the engine's errors to exit codes: a *engine.UsageError is
// bad input (2), anything else a failure (1).
func asExit(err error) error {
	var ue *engine.UsageError
	if errors.As(err, &ue) {
		return usage(err)
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	return &ExitError{Code: ExitFailed, Err: err}
}

// signalExit is the exit of a command that signal sg stopped: 128 + its number.
func signalExit(sg os.Signal) error {
	if n, ok := sg.(syscall.Signal); ok && (n == syscall.SIGTERM || n == syscall.SIGHUP || n == syscall.SIGPIPE) {
		return &ExitError{Code: 128 + int(n)}
	}
	return &ExitError{Code: ExitSIGINT}
}

// listenSignals starts the command's signal policy (internal/signals):
// its exit is 128 + the first signal's number (signalExit).
func listenSignals() *signals.Policy { return signals.Listen(signalExit) }

// resolved passes on an id that internal/shortid resolved: its refusal of
// what the user typed is bad usage (exit 2); a store's own error is
// returned as it is.
func resolved(id string, err error) (string, error) {
	var re *shortid.RefusedError
	if errors.As(err, &re) {
		return "", usage(err)
	}
	return id, err
}

// statusTarget resolves the id of `status` and `report`
// (shortid.Target): a job of the jobs' store (opened by openStore) or a
// sweep of the sweeps'.
func statusTarget(typed string, stderr io.Writer) (id string, jobs *job.Store, sweeps *sweep.Store, isSweep bool, err error) {
	home, err := job.DefaultHome()
	if err != nil {
		return "", nil, nil, false, err
	}
	id, jobs, sweeps, isSweep, err = shortid.Target(home, func() (*job.Store, error) { return openStore(stderr) }, typed)
	if _, err = resolved(id, err); err != nil {
		return "", nil, nil, false, err
	}
	return id, jobs, sweeps, isSweep, nil
}
