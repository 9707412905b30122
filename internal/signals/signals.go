// Package signals is stratbench's one answer to the stop signals, the
// same in every command that runs jobs (docs/commands.md, "Exit codes and
// signals"): the first SIGINT, SIGTERM or SIGHUP asks the run in flight to
// stop (the hook in flight completes, on_finish runs, the job is saved as
// stopped), any later one kills it at once, and the command then exits with
// 128 + the first signal's number. A reader of the output that went away
// (EPIPE) counts as a first SIGPIPE. What the exit is, as an error, the
// caller says (Listen's exit): the package names no exit code.
package signals

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
)

// stopSignals are the signals that ask stratbench to stop: SIGINT (ctrl+c),
// SIGTERM, and SIGHUP (the terminal closed).
var stopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// Policy is the signal policy of one command: it takes the signals as they
// come and remembers the first, whose exit ends the command.
type Policy struct {
	ch   chan os.Signal
	exit func(os.Signal) error // the error that ends a command sg stopped
	// outputGone is set by the first write whose reader went away
	// (WatchOutput): stdout's and stderr's both count once, as one
	// SIGPIPE, not as a first and a second signal.
	outputGone atomic.Bool

	mu    sync.Mutex
	first os.Signal
}

// New returns a policy that no signal reaches yet (Listen's, and tests'):
// exit is the error that ends a command that signal sg stopped.
func New(exit func(sg os.Signal) error) *Policy {
	return &Policy{ch: make(chan os.Signal, 2), exit: exit}
}

// Listen starts delivering the stop signals to a new policy; Close stops
// it. exit is as New's.
func Listen(exit func(sg os.Signal) error) *Policy {
	p := New(exit)
	signal.Notify(p.ch, stopSignals...)
	return p
}

// Close stops the delivery of signals.
func (p *Policy) Close() { signal.Stop(p.ch) }

// C delivers the signals as they come; pass each to Take.
func (p *Policy) C() <-chan os.Signal { return p.ch }

// Send delivers sg to the policy as if it had come (when there is room
// for it: a signal pending already stops the command). For tests.
func (p *Policy) Send(sg os.Signal) {
	select {
	case p.ch <- sg:
	default:
	}
}

// Take applies the policy to signal sg: the first signal calls stop, any
// later one calls kill.
func (p *Policy) Take(sg os.Signal, stop, kill func()) {
	p.mu.Lock()
	first := p.first == nil
	if first {
		p.first = sg
	}
	p.mu.Unlock()
	if first {
		stop()
		return
	}
	kill()
}

// Serve answers the signals by the policy from a goroutine of its own
// until end is called: the first signal calls stop, any later one kill.
// end waits for the goroutine (its owner is the caller) and may be called
// more than once; a signal that comes after it waits in the channel.
func (p *Policy) Serve(stop, kill func()) (end func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case sg := <-p.ch:
				p.Take(sg, stop, kill)
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-ended
		})
	}
}

// Scope is a command's setup (the interpreter probed, the data loaded, a
// sweep planned) under the policy: the first stop signal cancels its
// context until Finish, and the command then exits 128 + n without
// starting a job. Nothing made with the context may keep it: it is
// cancelled when the setup ends.
type Scope struct {
	ctx    context.Context
	cancel context.CancelFunc
	end    func() // stops answering the signals; the runs take them over
	p      *Policy
}

// BeginSetup starts a setup scope under ctx. Its caller calls Finish, and
// Cancel when the scope is done with.
func (p *Policy) BeginSetup(ctx context.Context) *Scope {
	ctx, cancel := context.WithCancel(ctx)
	return &Scope{ctx: ctx, cancel: cancel, end: p.Serve(cancel, cancel), p: p}
}

// Context is the setup's context: a stop signal cancels it.
func (sc *Scope) Context() context.Context { return sc.ctx }

// End stops answering the signals (the runs take them over); it may be
// called more than once.
func (sc *Scope) End() { sc.end() }

// Cancel cancels the setup's context.
func (sc *Scope) Cancel() { sc.cancel() }

// Policy is the policy the scope is of.
func (sc *Scope) Policy() *Policy { return sc.p }

// Finish ends the scope (End may have been called already) and reports
// whether a stop signal ended the setup. With drain, a signal still queued
// is taken as the setup's: nothing has taken the signals over, and a
// signal that came as the setup ended stops the command before its first
// job as well.
func (sc *Scope) Finish(drain bool) (stopped bool) {
	sc.end()
	if drain {
		select {
		case sg := <-sc.p.ch:
			sc.p.Take(sg, sc.cancel, sc.cancel)
		default:
		}
	}
	return sc.ctx.Err() != nil && sc.p.Stopped()
}

// Setup runs f, what a command does before its first job, in a setup
// scope. A stop signal meanwhile cancels f's context and Setup returns the
// signal's exit (128 + n) whatever f returned: f's error (the interpreter
// probe runs in the terminal's process group and dies of the same ctrl-c)
// or nil (a step that never looks at its context, the probe's answer kept
// from an earlier start). Without the scope a signal would meet Go's
// default disposition: stratbench would die of it, its probe left running.
func (p *Policy) Setup(ctx context.Context, f func(ctx context.Context) error) error {
	sc := p.BeginSetup(ctx)
	defer sc.cancel()
	err := f(sc.ctx)
	if sc.Finish(true) {
		return p.Exit()
	}
	return err
}

// Stopped reports whether a signal has come.
func (p *Policy) Stopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.first != nil
}

// Exit returns the error that ends a command a signal stopped (New's exit
// of the first signal), else SIGPIPE's when an output's reader went away,
// also after the command stopped taking signals (during its last words,
// the final report, whose SIGPIPE no one takes: the reader did not get the
// output whole, as `stratbench jobs | head -1` exits), or nil.
func (p *Policy) Exit() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.first == nil {
		if p.outputGone.Load() {
			return p.exit(syscall.SIGPIPE)
		}
		return nil
	}
	return p.exit(p.first)
}

// WatchOutput returns w as a writer whose reader going away (a write fails
// with EPIPE: `stratbench sweep … | head -3`) stops the command as a first
// signal does, with SIGPIPE's exit: the runs in flight stop, on_finish
// runs, what ran is saved. Writes after that are dropped. The process does
// not die of the SIGPIPE itself: the Go runtime raises it only for a broken
// pipe on descriptors 1 and 2, and stratbench writes through copies of
// them (app.StdStreams). A worker's pipes are not watched: their EPIPE is
// the worker's end, seen by the supervisor.
func (p *Policy) WatchOutput(w io.Writer) io.Writer {
	return &closedOutputWatch{w: w, p: p}
}

// closedOutputWatch is WatchOutput's writer.
type closedOutputWatch struct {
	w    io.Writer
	p    *Policy
	gone atomic.Bool // this writer's reader went away: its writes are dropped
}

func (c *closedOutputWatch) Write(b []byte) (int, error) {
	if c.gone.Load() {
		return len(b), nil
	}
	n, err := c.w.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		c.gone.Store(true)
		if !c.p.outputGone.Swap(true) {
			select {
			case c.p.ch <- syscall.SIGPIPE:
			default: // a signal is pending already: it stops the command
			}
		}
		return len(b), nil
	}
	return n, err
}
