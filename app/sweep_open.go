package app

import (
	"context"
	"errors"

	"stratbench/ui/components"
	"stratbench/ui/sweepview"
)

// SweepViewOptions are the options of `stratbench sweep view`.
type SweepViewOptions struct {
	ID    string // the sweep (an id or its prefix); "" chooses one from the list of sweeps
	Theme string // the view's theme
	Streams
}

// SweepView opens the sweep view on a sweep of the store, finished or
// not: a finished one as it ended, one that runs (in another stratbench)
// live, its results as they are appended. The view only watches: q
// quits and leaves a running sweep running. Without an id it lists the
// sweeps, newest first: enter opens one, esc in the view comes back to
// the list.
func SweepView(ctx context.Context, o SweepViewOptions) error {
	if err := checkTheme(o.Theme); err != nil {
		return err
	}
	store, err := openSweepStore()
	if err != nil {
		return err
	}
	id := ""
	if o.ID != "" {
		if id, err = store.Resolve(o.ID); err != nil {
			return asSweepExit(err)
		}
	}
	if !components.Interactive(o.Stdout) {
		return usage(errors.New("the sweep view needs a terminal: `stratbench status SWEEP_ID` prints a sweep, `stratbench sweeps` lists them"))
	}
	jobs, err := openStore(o.Stderr)
	if err != nil {
		return err
	}
	signals := listenSignals()
	defer signals.Close()
	interrupts, stop, kill := components.NewInterrupts()
	defer signals.Serve(stop, kill)()
	view := func(id string, back bool) error {
		err := sweepview.Follow(ctx, store, id, sweepview.Options{Store: jobs, Theme: o.Theme, Opener: components.Opener(), Interrupts: interrupts, Back: back,
			Report: func(ctx context.Context, id string) (string, error) { return writeSweepReport(ctx, store, jobs, id) },
			JobReport: func(ctx context.Context, id string) (string, error) {
				return writeJobReport(ctx, jobs, id, "")
			}})
		if err == nil || errors.Is(err, sweepview.ErrBack) {
			return err
		}
		return asSweepExit(err)
	}
	if id != "" {
		err = view(id, false)
	} else {
		err = sweepview.Browse(ctx, store, o.Theme, interrupts, signals.Stopped, func(id string) error { return view(id, true) })
	}
	if err != nil {
		return err
	}
	return signals.Exit()
}
