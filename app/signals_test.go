package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
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

// TestWatchOutput: a write whose reader went away stops the command once
// (a SIGPIPE for the policy), stdout's and stderr's alike, and later writes
// are dropped without an error.
func TestWatchOutput(t *testing.T) {
	p := &signalPolicy{ch: make(chan os.Signal, 4)}
	broken := func() *os.File {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		t.Cleanup(func() { w.Close() })
		return w
	}
	// Not fds 1 or 2: the runtime raises no SIGPIPE for these, as for
	// StdStreams' copies.
	out, errs := p.watchOutput(broken()), p.watchOutput(broken())
	for _, w := range []io.Writer{out, out, errs} {
		if n, err := w.Write([]byte("line\n")); n != 5 || err != nil {
			t.Fatalf("write to a pipe without a reader: %d, %v; want it dropped quietly", n, err)
		}
	}
	if got := len(p.ch); got != 1 {
		t.Fatalf("%d signals for the policy, want one SIGPIPE for both streams", got)
	}
	if sg := <-p.ch; sg != syscall.SIGPIPE {
		t.Fatalf("the policy got %v, want SIGPIPE", sg)
	}
}

// TestSignalPolicyServe: serve answers the first signal with stop and any
// later one with kill, from its own goroutine, which end waits for; a
// signal that comes after end waits in the channel, unanswered.
func TestSignalPolicyServe(t *testing.T) {
	p := &signalPolicy{ch: make(chan os.Signal, 2)}
	stops, kills := make(chan struct{}, 4), make(chan struct{}, 4)
	end := p.serve(func() { stops <- struct{}{} }, func() { kills <- struct{}{} })
	p.ch <- syscall.SIGINT
	<-stops
	p.ch <- syscall.SIGTERM
	<-kills
	end()
	end() // a second end does nothing
	p.ch <- syscall.SIGHUP
	if len(stops)+len(kills) != 0 || len(p.ch) != 1 {
		t.Fatalf("after end: %d stops, %d kills, %d signals waiting; want 0, 0, 1", len(stops), len(kills), len(p.ch))
	}
	if err := p.exit(); err == nil {
		t.Fatal("no exit error after a signal")
	} else if code, _ := ExitCode(err); code != 130 {
		t.Fatalf("exit %d, want 130 (the first signal's)", code)
	}
}

// TestSignalPolicySetup: a setup's error is its own when no signal came;
// a signal during it cancels its context and its exit (128 + n) is the
// command's whatever the setup returned; a signal still queued when the
// setup ends is the setup's when drained, the runs' when not.
func TestSignalPolicySetup(t *testing.T) {
	p := &signalPolicy{ch: make(chan os.Signal, 2)}
	setupErr := errors.New("no interpreter")
	if err := p.setup(context.Background(), func(context.Context) error { return setupErr }); err != setupErr {
		t.Fatalf("no signal: %v, want the setup's error", err)
	}
	for _, returned := range []error{nil, setupErr} {
		p := &signalPolicy{ch: make(chan os.Signal, 2)}
		err := p.setup(context.Background(), func(ctx context.Context) error {
			p.ch <- syscall.SIGTERM
			<-ctx.Done() // the signal cancels the setup
			return returned
		})
		if code, _ := ExitCode(err); code != 143 {
			t.Fatalf("a signal during a setup that returned %v: %v, want exit 143", returned, err)
		}
	}
	for _, drain := range []bool{true, false} {
		p := &signalPolicy{ch: make(chan os.Signal, 2)}
		sc := p.beginSetup(context.Background())
		sc.end()
		p.ch <- syscall.SIGINT // after the setup stopped answering
		if stopped := sc.finish(drain); stopped != drain {
			t.Errorf("finish(%v) with a signal queued: stopped %v", drain, stopped)
		}
		if queued := len(p.ch) == 1; queued == drain {
			t.Errorf("finish(%v): the signal queued is still there: %v", drain, queued)
		}
		sc.cancel()
	}
}
