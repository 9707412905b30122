package sweep

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
)

// Item is one run a sweep asks an executor for: a combination, in a fold's
// phase and window for a walk-forward.
type Item struct {
	// Fold is the walk-forward fold (from 0), nil in a plain sweep.
	Fold *int
	// Phase is the fold's phase, PhaseNone in a plain sweep.
	Phase Phase
	// Combination is the swept values and their index.
	Combination Combination
	// Args are the run's --param arguments (Spec.Args): the fixed params,
	// then the combination's, each written so that the run types it back
	// to the same value.
	Args []string
	// Window is the run's window for a walk-forward phase; nil runs over
	// the sweep's own --from and --to.
	Window *Window
}

// String names the item for messages: "index 3", "fold 1, phase test, index 3".
func (it Item) String() string {
	r := Result{Fold: it.Fold, Phase: it.Phase, Index: it.Combination.Index}
	return r.key().String()
}

// RunExecutor runs a sweep's items. The local Pool is one; a Ray executor,
// which runs them on a cluster, is another.
type RunExecutor interface {
	// Execute runs items and calls finished for each run that ended with
	// a result (passed or failed), one call at a time, in the order they
	// end. A run that stop or ctx ended has no result: it is not passed to
	// finished (a resumed sweep runs it again).
	//
	// Closing stop asks for a graceful end: no item starts any more, and
	// the runs in flight are asked to stop (the hook in flight completes
	// and on_finish runs); Execute returns once they have. Cancelling ctx
	// kills the runs in flight at once.
	//
	// An error of finished, or a run that could not run at all, ends the
	// execution as stop does, and Execute returns that error (the first).
	Execute(ctx context.Context, items iter.Seq[Item], stop <-chan struct{}, finished func(Item, Result) error) error
}

// ErrRunStopped is returned by Started.Wait for a run a stop ended: it has
// no result.
var ErrRunStopped = errors.New("the run was stopped")

// Starter starts one run as an ordinary job. Its ctx kills the run when
// cancelled.
type Starter interface {
	Start(ctx context.Context, it Item) (Started, error)
}

// Started is a run in flight.
type Started interface {
	// Stop asks the run to stop gracefully (on_finish runs). It may be
	// called more than once, and after the run ended.
	Stop()
	// Wait waits for the run's end and returns its result, or
	// ErrRunStopped when it was stopped, or why it could not run.
	Wait() (Result, error)
}

// Pool is the local executor: it runs items on Slots runs at once, each
// started by Starter, in the order the items come. A slot takes the next
// item as soon as its run ends, so a slow run holds back only its slot.
type Pool struct {
	// Slots is the number of concurrent runs, at least 1.
	Slots int
	// Starter starts each run.
	Starter Starter
}

// Execute runs items on the pool's slots (see RunExecutor).
func (p *Pool) Execute(ctx context.Context, items iter.Seq[Item], stop <-chan struct{}, finished func(Item, Result) error) error {
	if p.Slots < 1 {
		return fmt.Errorf("sweep: a pool of %d slots", p.Slots)
	}
	e := &poolRun{inflight: map[int]Started{}, halt: make(chan struct{}), finished: finished}
	// The watcher passes a stop on to the runs in flight and ends with the
	// execution.
	ended := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-stop:
			e.stopAll()
		case <-ended:
		}
	}()
	defer func() {
		close(ended)
		<-watched
	}()

	slots := make(chan struct{}, p.Slots)
	var wg sync.WaitGroup
	next := 0
dispatch:
	for it := range items {
		select {
		case slots <- struct{}{}:
		case <-stop:
			break dispatch
		case <-e.halt:
			break dispatch
		}
		// A slot and a stop may both be ready: the stop wins.
		select {
		case <-stop:
			<-slots
			break dispatch
		case <-e.halt:
			<-slots
			break dispatch
		default:
		}
		run, err := p.Starter.Start(ctx, it)
		if err != nil {
			<-slots
			e.fail(fmt.Errorf("%s: %w", it, err))
			break
		}
		id := next
		next++
		e.add(id, run)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			res, err := run.Wait()
			e.remove(id)
			switch {
			case errors.Is(err, ErrRunStopped):
			case err != nil:
				e.fail(fmt.Errorf("%s: %w", it, err))
			default:
				e.report(it, res)
			}
		}()
	}
	wg.Wait()
	return e.err
}

// poolRun is the state of one Execute: the runs in flight (to stop them),
// the first error, and the one-at-a-time calls of finished.
type poolRun struct {
	mu       sync.Mutex
	inflight map[int]Started
	stopping bool
	err      error
	halt     chan struct{} // closed with the first error

	reportMu sync.Mutex
	finished func(Item, Result) error
}

// add registers a run in flight; a stop that came first reaches it at once.
func (e *poolRun) add(id int, r Started) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.inflight[id] = r
	if e.stopping {
		r.Stop()
	}
}

func (e *poolRun) remove(id int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.inflight, id)
}

// stopAll asks every run in flight, and every run added later, to stop.
func (e *poolRun) stopAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stopping = true
	for _, r := range e.inflight {
		r.Stop()
	}
}

// fail records the first error and stops the execution.
func (e *poolRun) fail(err error) {
	e.mu.Lock()
	first := e.err == nil
	if first {
		e.err = err
		close(e.halt)
	}
	e.mu.Unlock()
	if first {
		e.stopAll()
	}
}

// report passes a result to finished, one at a time.
func (e *poolRun) report(it Item, res Result) {
	e.reportMu.Lock()
	err := e.finished(it, res)
	e.reportMu.Unlock()
	if err != nil {
		e.fail(err)
	}
}
