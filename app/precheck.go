package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"stratbench/data"
	"stratbench/job"
	"stratbench/present"
)

// Precheck limits (docs/sandbox.md, "precheck"): a short window of few events.
const (
	precheckWindow = 24 * time.Hour
	precheckEvents = 1000
)

// Precheck runs a short sandboxed backtest of o.Strategy over o.From to
// o.To and records a pass, keyed by the content of the script that ran,
// the exact --param arguments and the stratbench version. A script whose
// current content already passed with the same params is not run again.
func Precheck(ctx context.Context, o RunOptions) error {
	if err := checkOutput(o.Output, "text", "json"); err != nil {
		return err
	}
	if o.From == "" || o.To == "" {
		return usage(errors.New("precheck needs --from and --to"))
	}
	window, err := data.ParseWindow(o.From, o.To)
	if err != nil {
		return dataError(err)
	}
	if span := window.To.Sub(window.From); span > precheckWindow {
		return usage(fmt.Errorf("precheck window %s → %s is %s; the limit is 24 hours", o.From, o.To, span))
	}
	if err := checkStrategyArg(o.Strategy, nil); err != nil {
		return usage(err)
	}
	// Whether the script as it is now has passed already is a lookup
	// only: the pass a run records is keyed below by what that run read.
	source, err := os.ReadFile(o.Strategy)
	if err != nil {
		return usage(fmt.Errorf("strategy: %w", err))
	}
	o.Sandbox = true
	s, signals, err := openSession(ctx, o, o.Strategy, false)
	if err != nil {
		return err
	}
	defer signals.Close()
	defer s.Close()
	d, err := s.Driver(ctx) // on the data the session loaded
	if err != nil {
		return err
	}
	setup := d.Setup()
	if n := setup.Data.Events; n > precheckEvents {
		return usage(fmt.Errorf("precheck window has %d events; the limit is 1,000 (narrow --from/--to)", n))
	}
	if rec, err := s.Store().LoadPrecheck(job.PrecheckKey(job.SourceSHA256(source), o.Params, Version)); err != nil {
		return err
	} else if rec != nil {
		return present.WritePrecheck(o.Stdout, job.PrecheckResult{Status: job.PrecheckAlready, Record: rec}, o.Output)
	}
	rep, err := runOnce(ctx, s, o.Streams, signals)
	if err != nil {
		return asExit(err)
	}
	res, err := s.Store().RecordPrecheck(o.Params, Version, setup.Data, rep)
	if err != nil {
		return err
	}
	if err := present.WritePrecheck(o.Stdout, res, o.Output); err != nil {
		return err
	}
	if signals.Stopped() {
		return signals.Exit()
	}
	if res.Status == job.PrecheckFailed {
		return failed()
	}
	return nil
}
