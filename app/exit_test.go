package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"stratbench/engine"
	"stratbench/internal/signals"
)

// TestSignalExit: the command a signal stopped exits with 128 + the first
// signal's number (internal/signals' policy, with app's exit).
func TestSignalExit(t *testing.T) {
	for _, tc := range []struct {
		first os.Signal
		code  int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}, {syscall.SIGHUP, 129}} {
		p := signals.New(signalExit)
		p.Take(tc.first, func() {}, func() {})
		p.Take(syscall.SIGINT, func() {}, func() {})
		if code, _ := ExitCode(p.Exit()); code != tc.code {
			t.Errorf("%v first: exit %d, want %d", tc.first, code, tc.code)
		}
	}
}

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
		say  bool
	}{
		{nil, 0, false},
		{failed(), 1, false},
		{usage(errors.New("--output \"yaml\"")), 2, true},
		{errors.New("unknown flag: --bogus"), 2, true}, // cobra's
		{asExit(&engine.UsageError{Err: errors.New("no such param")}), 2, true},
		{asExit(&engine.SaveError{JobID: "j", Errors: []string{"disk full"}}), 1, true},
		{signalExit(syscall.SIGTERM), 143, false},
		{signalExit(syscall.SIGPIPE), 141, false},
		// `stratbench jobs | head -1`: stdout's reader went away.
		{fmt.Errorf("list: %w", &fs.PathError{Op: "write", Path: os.Stdout.Name(), Err: syscall.EPIPE}), 141, false},
		// Any other pipe's EPIPE (a worker's) is an error like another.
		{&fs.PathError{Op: "write", Path: "|1", Err: syscall.EPIPE}, 2, true},
	} {
		code, msg := ExitCode(tc.err)
		if code != tc.code || (msg != nil) != tc.say {
			t.Errorf("ExitCode(%v) = %d, %v; want %d (message: %v)", tc.err, code, msg, tc.code, tc.say)
		}
	}
	// The context an exit error was wrapped in is said.
	if _, msg := ExitCode(fmt.Errorf("prune --sweep: %w", usage(errors.New("unknown sweep")))); msg == nil || msg.Error() != "prune --sweep: unknown sweep" {
		t.Errorf("a wrapped usage error says %v, want its context", msg)
	}
}
