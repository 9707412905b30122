package app

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"stratbench/engine"
)

// TestSignalPolicy: the first signal stops, any later one kills, and the
// command exits with 128 + the first signal's number.
func TestSignalPolicy(t *testing.T) {
	for _, tc := range []struct {
		first os.Signal
		code  int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}, {syscall.SIGHUP, 129}} {
		p := &signalPolicy{}
		if p.stopped() || p.exit() != nil {
			t.Fatal("a policy that saw no signal says it stopped")
		}
		var calls []string
		stop, kill := func() { calls = append(calls, "stop") }, func() { calls = append(calls, "kill") }
		p.take(tc.first, stop, kill)
		p.take(syscall.SIGINT, stop, kill)
		p.take(syscall.SIGTERM, stop, kill)
		if fmt.Sprint(calls) != "[stop kill kill]" {
			t.Errorf("%v then two more: %v, want stop then kills", tc.first, calls)
		}
		if code, _ := ExitCode(p.exit()); code != tc.code || !p.stopped() {
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
	} {
		code, msg := ExitCode(tc.err)
		if code != tc.code || (msg != nil) != tc.say {
			t.Errorf("ExitCode(%v) = %d, %v; want %d (message: %v)", tc.err, code, msg, tc.code, tc.say)
		}
	}
}
