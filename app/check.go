package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"stratbench/check"
	"stratbench/data"
	"stratbench/present"
)

// Check runs `stratbench check STRATEGY [run flags]` (docs/robustness.md,
// "Bias checks"): the check package replays the run and looks for
// look-ahead, a warm-up longer than the MANIFEST's history, and runs that
// are not deterministic. It returns nil when it found nothing, exit 1 when
// it found something (or the run itself fails), exit 2 for bad usage.
func Check(ctx context.Context, o RunOptions) error {
	if err := checkOutput(o.Output, "text", "json"); err != nil {
		return err
	}
	if err := checkStrategyArg(o.Strategy, nil); err != nil {
		return usage(err)
	}
	started := time.Now()
	s, signals, err := openSession(ctx, o, o.Strategy, false)
	if err != nil {
		return err
	}
	defer signals.Close()
	defer s.Close()
	// The replays are jobs of a scratch home that goes when the check ends.
	cfg, release, err := check.ForSession(s, o.Params, o.market(), o.Data, o.Timeframe)
	if err != nil {
		return usage(err)
	}
	defer release()
	var rep *check.Report
	err = signals.Setup(ctx, func(ctx context.Context) error {
		var err error
		rep, err = check.Run(ctx, cfg)
		return err
	})
	var runFailed *check.FailedError
	switch {
	case errors.As(err, &runFailed):
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("check %s: %w (stratbench --ci %s says more)", o.Strategy, err, o.Strategy)}
	case err != nil:
		var de *data.Error
		if errors.As(err, &de) {
			return dataError(err)
		}
		return asExit(err)
	}
	took := time.Since(started)
	if err := present.WriteCheck(o.Stdout, o.Output, s.Strategy(), cfg.Window.String(), o.Data, rep, took); err != nil {
		return err
	}
	if rep.Found {
		return failed()
	}
	return nil
}
