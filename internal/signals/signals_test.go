package signals

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"

	"stratbench/internal/leakcheck"
)

func TestMain(m *testing.M) {
	os.Exit(leakcheck.Main(m, "stratbench/internal/signals"))
}

// stopped is the exit the tests' policies give: the signal itself.
type stopped struct{ sg os.Signal }

func (s stopped) Error() string { return "stopped by " + s.sg.String() }

func exitOf(sg os.Signal) error { return stopped{sg} }

// signalOf is the signal err says stopped the command, or nil.
func signalOf(err error) os.Signal {
	var s stopped
	if errors.As(err, &s) {
		return s.sg
	}
	return nil
}

// TestPolicy: the first signal stops, any later one kills, and the
// command's exit is the first signal's.
func TestPolicy(t *testing.T) {
	for _, first := range []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		p := New(exitOf)
		if p.Stopped() || p.Exit() != nil {
			t.Fatal("a policy that saw no signal says it stopped")
		}
		var calls []string
		stop, kill := func() { calls = append(calls, "stop") }, func() { calls = append(calls, "kill") }
		p.Take(first, stop, kill)
		p.Take(syscall.SIGINT, stop, kill)
		p.Take(syscall.SIGTERM, stop, kill)
		if fmt.Sprint(calls) != "[stop kill kill]" {
			t.Errorf("%v then two more: %v, want stop then kills", first, calls)
		}
		if sg := signalOf(p.Exit()); sg != first || !p.Stopped() {
			t.Errorf("%v first: exit of %v", first, sg)
		}
	}
}

// TestWatchOutput: a write whose reader went away stops the command once
// (a SIGPIPE for the policy), stdout's and stderr's alike, and later writes
// are dropped without an error.
func TestWatchOutput(t *testing.T) {
	p := &Policy{ch: make(chan os.Signal, 4), exit: exitOf}
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
	// app.StdStreams' copies.
	out, errs := p.WatchOutput(broken()), p.WatchOutput(broken())
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
	// Taken by nothing, the reader gone is the command's exit all the same.
	if sg := signalOf(p.Exit()); sg != syscall.SIGPIPE {
		t.Fatalf("exit of %v, want SIGPIPE's", sg)
	}
}

// TestServe: Serve answers the first signal with stop and any later one
// with kill, from its own goroutine, which end waits for; a signal that
// comes after end waits in the channel, unanswered.
func TestServe(t *testing.T) {
	p := New(exitOf)
	stops, kills := make(chan struct{}, 4), make(chan struct{}, 4)
	end := p.Serve(func() { stops <- struct{}{} }, func() { kills <- struct{}{} })
	p.Send(syscall.SIGINT)
	<-stops
	p.Send(syscall.SIGTERM)
	<-kills
	end()
	end() // a second end does nothing
	p.Send(syscall.SIGHUP)
	if len(stops)+len(kills) != 0 || len(p.ch) != 1 {
		t.Fatalf("after end: %d stops, %d kills, %d signals waiting; want 0, 0, 1", len(stops), len(kills), len(p.ch))
	}
	if sg := signalOf(p.Exit()); sg != syscall.SIGINT {
		t.Fatalf("exit of %v, want the first signal's", sg)
	}
}

// TestSetup: a setup's error is its own when no signal came; a signal
// during it cancels its context and its exit is the command's whatever the
// setup returned; a signal still queued when the setup ends is the setup's
// when drained, the runs' when not.
func TestSetup(t *testing.T) {
	p := New(exitOf)
	setupErr := errors.New("no interpreter")
	if err := p.Setup(context.Background(), func(context.Context) error { return setupErr }); err != setupErr {
		t.Fatalf("no signal: %v, want the setup's error", err)
	}
	for _, returned := range []error{nil, setupErr} {
		p := New(exitOf)
		err := p.Setup(context.Background(), func(ctx context.Context) error {
			p.Send(syscall.SIGTERM)
			<-ctx.Done() // the signal cancels the setup
			return returned
		})
		if sg := signalOf(err); sg != syscall.SIGTERM {
			t.Fatalf("a signal during a setup that returned %v: %v, want SIGTERM's exit", returned, err)
		}
	}
	for _, drain := range []bool{true, false} {
		p := New(exitOf)
		sc := p.BeginSetup(context.Background())
		sc.End()
		p.Send(syscall.SIGINT) // after the setup stopped answering
		if stopped := sc.Finish(drain); stopped != drain {
			t.Errorf("Finish(%v) with a signal queued: stopped %v", drain, stopped)
		}
		if queued := len(p.ch) == 1; queued == drain {
			t.Errorf("Finish(%v): the signal queued is still there: %v", drain, queued)
		}
		sc.Cancel()
	}
}
