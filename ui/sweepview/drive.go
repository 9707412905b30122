package sweepview

import (
	"context"

	"stratbench/ui/components"
)

// Driver runs the sweep a view shows (RunDriven): it tells the view of
// the sweep's changes through push, in order, and returns once a request
// on stops has ended the sweep in flight, or ctx has ended.
type Driver func(ctx context.Context, push func(Update), stops <-chan struct{}) error

// RunDriven runs the view over the sweep that drive runs (`stratbench
// sweep` without --ci) and returns once both have ended; o's Updates, Stop
// and Interrupts are set here. serve answers the command's signals until
// the end it returns is called (as signals.Policy.Serve): its stop is the
// view's first interrupt, its kill the second. Once the view is gone, the
// sweep is asked to stop; if drive has not returned by then (the view was
// quit at once: q twice, a second signal), ctx ends for it, which kills
// the runs in flight, and RunDriven returns nil whatever they returned.
// Otherwise it returns drive's error, else the view's.
func RunDriven(ctx context.Context, o Options, serve func(stop, kill func()) (end func()), drive Driver) error {
	ctx, kill := context.WithCancel(ctx)
	defer kill()
	interrupts, stopView, killView := components.NewInterrupts()
	o.Interrupts = interrupts
	endSignals := serve(stopView, killView)
	defer endSignals()
	updates := newQueue()
	o.Updates = updates.Out()
	stops := make(chan struct{}, 1) // the view's stop requests
	o.Stop = func() {
		select {
		case stops <- struct{}{}:
		default: // one is pending already
		}
	}
	driven := make(chan error, 1)
	go func() {
		defer updates.Close()
		driven <- drive(ctx, updates.Push, stops)
	}()
	viewErr := Run(ctx, o)
	endSignals()
	o.Stop()
	defer updates.Discard()
	select {
	case err := <-driven:
		if err == nil {
			err = viewErr
		}
		return err
	default:
		kill()
		<-driven
		return nil
	}
}
