package app

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

// signalPolicy is stratbench's one answer to the stop signals, the same in
// the workbench, --ci, --ci --watch and precheck: the first signal asks the
// run in flight to stop (the hook in flight completes, on_finish runs, the
// job is saved as stopped), and any later one kills it at once (the job is
// still saved, as stopped). The command then exits with 128 + the first
// signal's number. Every command that runs jobs listens through one.
type signalPolicy struct {
	ch chan os.Signal
	// outputGone is set by the first write whose reader went away
	// (watchOutput): stdout's and stderr's both count once, as one
	// SIGPIPE, not as a first and a second signal.
	outputGone atomic.Bool

	mu    sync.Mutex
	first os.Signal
}

// listenSignals starts delivering the stop signals to a new policy; close
// stops it.
func listenSignals() *signalPolicy {
	p := &signalPolicy{ch: make(chan os.Signal, 2)}
	signal.Notify(p.ch, stopSignals...)
	return p
}

// close stops the delivery of signals.
func (p *signalPolicy) close() { signal.Stop(p.ch) }

// C delivers the signals as they come; pass each to take.
func (p *signalPolicy) C() <-chan os.Signal { return p.ch }

// take applies the policy to signal sg: the first signal calls stop, any
// later one calls kill.
func (p *signalPolicy) take(sg os.Signal, stop, kill func()) {
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

// serve answers the signals by the policy from a goroutine of its own
// until end is called: the first signal calls stop, any later one kill.
// end waits for the goroutine (its owner is the caller) and may be called
// more than once; a signal that comes after it waits in the channel.
func (p *signalPolicy) serve(stop, kill func()) (end func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case sg := <-p.ch:
				p.take(sg, stop, kill)
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

// setupScope is a command's setup (the interpreter probed, the data
// loaded, a sweep planned) under the policy: the first stop signal cancels
// ctx until finish, and the command then exits 128 + n without starting a
// job. Nothing made with ctx may keep it: it is cancelled when the setup
// ends.
type setupScope struct {
	ctx    context.Context
	cancel context.CancelFunc
	end    func() // stops answering the signals; the runs take them over
	p      *signalPolicy
}

// beginSetup starts a setup scope under ctx. Its caller calls finish, and
// cancel when the scope is done with.
func (p *signalPolicy) beginSetup(ctx context.Context) *setupScope {
	ctx, cancel := context.WithCancel(ctx)
	return &setupScope{ctx: ctx, cancel: cancel, end: p.serve(cancel, cancel), p: p}
}

// finish ends the scope (end may have been called already) and reports
// whether a stop signal ended the setup. With drain, a signal still queued
// is taken as the setup's: nothing has taken the signals over, and a
// signal that came as the setup ended stops the command before its first
// job as well.
func (sc *setupScope) finish(drain bool) (stopped bool) {
	sc.end()
	if drain {
		select {
		case sg := <-sc.p.ch:
			sc.p.take(sg, sc.cancel, sc.cancel)
		default:
		}
	}
	return sc.ctx.Err() != nil && sc.p.stopped()
}

// setup runs f, what a command does before its first job, in a setup
// scope. A stop signal meanwhile cancels f's context and setup returns the
// signal's exit (128 + n) whatever f returned: f's error (the interpreter
// probe runs in the terminal's process group and dies of the same ctrl-c)
// or nil (a step that never looks at its context, the probe's answer kept
// from an earlier start). Without the scope a signal would meet Go's
// default disposition: stratbench would die of it, its probe left running.
func (p *signalPolicy) setup(ctx context.Context, f func(ctx context.Context) error) error {
	sc := p.beginSetup(ctx)
	defer sc.cancel()
	err := f(sc.ctx)
	if sc.finish(true) {
		return p.exit()
	}
	return err
}

// stopped reports whether a signal has come.
func (p *signalPolicy) stopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.first != nil
}

// exit returns the error that ends a command a signal stopped (128 + the
// first signal's number), else SIGPIPE's when an output's reader went
// away, also after the command stopped taking signals (during its last
// words, the final report, whose SIGPIPE no one takes: the reader did not
// get the output whole, as `stratbench jobs | head -1` exits), or nil.
func (p *signalPolicy) exit() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.first == nil {
		if p.outputGone.Load() {
			return signalExit(syscall.SIGPIPE)
		}
		return nil
	}
	return signalExit(p.first)
}

// watchOutput returns w as a writer whose reader going away (a write fails
// with EPIPE: `stratbench sweep … | head -3`) stops the command as a first
// signal does, with SIGPIPE's exit code (141): the runs in flight stop,
// on_finish runs, what ran is saved. Writes after that are dropped. The
// process does not die of the SIGPIPE itself: the Go runtime raises it
// only for a broken pipe on descriptors 1 and 2, and StdStreams writes
// through copies of them. A worker's pipes are not watched: their EPIPE is
// the worker's end, seen by the supervisor.
func (p *signalPolicy) watchOutput(w io.Writer) io.Writer {
	return &closedOutputWatch{w: w, p: p}
}

// closedOutputWatch is watchOutput's writer.
type closedOutputWatch struct {
	w    io.Writer
	p    *signalPolicy
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
