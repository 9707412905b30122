package local

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"

	"stratbench/internal/signals"
	"stratbench/sweep"
	"stratbench/watch"
)

// Events are what Drive tells its viewer (the sweep view) as the sweeps
// run; every func is called from Drive's goroutine or its runner's.
type Events struct {
	Notice  func(text string)          // something to say: why a sweep stopped, how its runs started
	Result  func(sweep.Result)         // a run's result, as it is appended
	Saved   func(sweep.Document)       // the document, as it is saved
	Ended   func(final sweep.Document) // a sweep ended (its runs not in it)
	Restart func(next *Sweep)          // a new sweep of the same spec starts
}

// Drive runs sw, and after each save of the strategy that changes it,
// stops the sweep in flight (saved as stopped) and runs the one next
// makes of the same spec (a refusal is said, and the next save tried). It
// returns when a stop request came and the sweep in flight has ended, or
// when ctx ends.
func Drive(ctx context.Context, sw *Sweep, next func(prev *Sweep) (*Sweep, error), changes <-chan watch.Change,
	stops <-chan struct{}, ev Events) error {
	for {
		saved, quit, err := runUntilSave(ctx, sw, changes, stops, ev)
		if err != nil && ctx.Err() == nil {
			// The sweep is saved as stopped: the view says why, not only
			// the summary printed after it.
			ev.Notice(fmt.Sprintf("the sweep stopped: %v", err))
		}
		if err != nil || quit || ctx.Err() != nil {
			return err
		}
		if saved == "" {
			// The sweep ended by itself: a save starts it again.
			var ok bool
			if saved, ok = waitForSave(ctx, changes, stops, sw.Doc.Strategy.SHA256); !ok {
				return nil
			}
		}
		for {
			n, err := next(sw)
			if err == nil {
				sw = n
				break
			}
			// The new content does not take the spec: say so, and wait
			// for the next save.
			ev.Notice(fmt.Sprintf("the strategy changed but cannot be swept: %v", err))
			var ok bool
			if saved, ok = waitForSave(ctx, changes, stops, saved); !ok {
				return nil
			}
		}
		ev.Restart(sw)
	}
}

// runUntilSave runs sw until it ends, a stop request comes (quit), or the
// strategy is saved with new content (saved is its hash; the sweep is
// stopped). It closes the sweep's results and tells its last document.
func runUntilSave(ctx context.Context, sw *Sweep, changes <-chan watch.Change, stops <-chan struct{},
	ev Events) (saved string, quit bool, err error) {
	defer sw.Results.Close()
	stop := make(chan struct{})
	var stopOnce sync.Once
	stopRun := func() { stopOnce.Do(func() { close(stop) }) }
	runner, done := sw.Runner()
	defer func() {
		if notices := done(); len(notices) > 0 {
			ev.Notice(strings.Join(notices, " · "))
		}
	}()
	runner.OnResult = ev.Result
	runner.OnSave = ev.Saved
	ran := make(chan error, 1)
	go func() { ran <- runner.Run(ctx, stop) }()
	for {
		select {
		case err = <-ran:
			final := *sw.Doc
			final.Runs = nil
			ev.Ended(final)
			if errors.Is(err, ErrStrategyChanged) && !quit {
				// A run started between a save and the watcher's word of
				// it (more likely on a busy machine) and read the saved
				// content: the sweep ended as the save would have ended
				// it, and the save, when the watcher passes it on, starts
				// the sweep again (saved is still empty when it has not).
				err = nil
			}
			return saved, quit, err
		case <-stops:
			quit = true
			stopRun()
		case ch, ok := <-changes:
			if !ok {
				changes = nil
				continue
			}
			if h := hex.EncodeToString(ch.Hash[:]); ch.Kind == watch.Changed && h != sw.Doc.Strategy.SHA256 && !quit {
				saved = h
				stopRun()
			}
		}
	}
}

// waitForSave waits for a save of the strategy whose content hash is not
// seen, and returns it; ok is false after a stop request or the end of ctx
// or of the changes.
func waitForSave(ctx context.Context, changes <-chan watch.Change, stops <-chan struct{}, seen string) (hash string, ok bool) {
	for {
		select {
		case <-stops:
			return "", false
		case <-ctx.Done():
			return "", false
		case ch, open := <-changes:
			if !open {
				return "", false
			}
			if h := hex.EncodeToString(ch.Hash[:]); ch.Kind == watch.Changed && h != seen {
				return h, true
			}
		}
	}
}

// RunHeadless runs sw without a view, under the command's signal policy
// p: the first signal stops the runs in flight (on_finish runs) and saves
// the sweep as stopped, a second kills them; a first signal taken before
// (during the setup) stops the sweep before any run starts. result is
// told of each result as it is appended, notice of how the runs started
// once they have ended.
func RunHeadless(ctx context.Context, sw *Sweep, p *signals.Policy, result func(sweep.Result), notice func(string)) error {
	ctx, kill := context.WithCancel(ctx)
	defer kill()
	stop := make(chan struct{})
	if p.Stopped() {
		close(stop)
	}
	endSignals := p.Serve(func() { close(stop) }, kill)
	defer endSignals()
	runner, done := sw.Runner()
	runner.OnResult = result
	err := runner.Run(ctx, stop)
	for _, n := range done() {
		notice(n)
	}
	return err
}
