package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"stratbench/data"
	"stratbench/job"
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
	s, signals, err := openSession(ctx, o, o.Strategy)
	if err != nil {
		return err
	}
	defer signals.close()
	defer s.close()
	d, err := s.driver(ctx) // on the data the session loaded
	if err != nil {
		return err
	}
	setup := d.Setup()
	if n := setup.Data.Events; n > precheckEvents {
		return usage(fmt.Errorf("precheck window has %d events; the limit is 1,000 (narrow --from/--to)", n))
	}
	if rec, err := s.store.LoadPrecheck(job.PrecheckKey(job.SourceSHA256(source), o.Params, Version)); err != nil {
		return err
	} else if rec != nil {
		return writePrecheck(o.Stdout, job.PrecheckResult{Status: job.PrecheckAlready, Record: rec}, o.Output)
	}
	rep, err := runOnce(ctx, s.start, o.Streams, signals)
	if err != nil {
		return asExit(err)
	}
	res, err := s.store.RecordPrecheck(o.Params, Version, setup.Data, rep)
	if err != nil {
		return err
	}
	if err := writePrecheck(o.Stdout, res, o.Output); err != nil {
		return err
	}
	if signals.stopped() {
		return signals.exit()
	}
	if res.Status == job.PrecheckFailed {
		return failed()
	}
	return nil
}

// writePrecheck writes a precheck's verdict, then the run's report, as
// text or as JSON.
func writePrecheck(w io.Writer, res job.PrecheckResult, format string) error {
	if format == "json" {
		return writeJSON(w, res)
	}
	switch res.Status {
	case job.PrecheckAlready:
		r := res.Record
		_, err := fmt.Fprintf(w, "already checked: this script and params passed precheck %s → %s on %s (job %s, stratbench %s)\n",
			r.From, r.To, r.PassedAt.Local().Format("2006-01-02 15:04"), r.JobID, r.Version)
		return err
	case job.PrecheckPassed:
		fmt.Fprintf(w, "precheck passed: recorded for this script, params %q and stratbench %s\n\n", res.Record.Params, res.Record.Version)
	case job.PrecheckStopped:
		fmt.Fprint(w, "precheck stopped before the end: nothing recorded\n\n")
	default:
		fmt.Fprint(w, "precheck failed\n\n")
	}
	return writeReport(w, res.Report, "text")
}
