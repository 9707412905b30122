package app

import (
	"os"
	"os/signal"
	"sync"
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

// stopped reports whether a signal has come.
func (p *signalPolicy) stopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.first != nil
}

// exit returns the error that ends a command a signal stopped (128 + the
// first signal's number), or nil when none came.
func (p *signalPolicy) exit() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.first == nil {
		return nil
	}
	return signalExit(p.first)
}
