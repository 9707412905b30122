package app

import (
	"context"
	"errors"
	"fmt"

	"stratbench/backtest"
	"stratbench/data"
	"stratbench/sweep"
)

// The libraries name no command-line flag: their refusals carry the field
// at fault (sweep.UsageError's Field, data.WindowError's and
// data.OptionError's Option, backtest.OptionError's Option), and the
// functions here name it as the command line does (--grid, --from), or,
// for a value a resume reads from a sweep's document, as the document
// does (spec.grid, run_flags.from).

// namedError is a library's refusal with its field named for the user.
type namedError struct {
	msg string
	err error
	// doc is set when the name is a sweep document's field, not a flag.
	doc bool
}

func (e *namedError) Error() string { return e.msg }
func (e *namedError) Unwrap() error { return e.err }

// sweepFlags name the fields of a sweep's refusals as the command line
// does.
var sweepFlags = map[sweep.Field]string{
	sweep.FieldParams:      "--param",
	sweep.FieldGrid:        "--grid",
	sweep.FieldConstraint:  "--constraint",
	sweep.FieldRandom:      "--random",
	sweep.FieldMetric:      "--metric",
	sweep.FieldWalkForward: "--walk-forward",
	sweep.FieldJobs:        "--jobs",
	sweep.FieldResume:      "--resume",
	sweep.FieldID:          "sweep id",
}

// sweepNamed names the field of err when it is a sweep refusal (a
// *sweep.UsageError, which the sweep package never wraps): as the
// command line does, or, when the value came from the sweep's document
// (the refusal is Saved, or inDoc says so), as the document does. Other
// errors, and a refusal named already, are returned as they are.
func sweepNamed(err error, inDoc bool) error {
	ue, ok := err.(*sweep.UsageError)
	if !ok {
		return err
	}
	if ue.Saved || inDoc {
		return &namedError{msg: ue.Named(ue.Field.DocField()), err: ue, doc: true}
	}
	return &namedError{msg: ue.Named(sweepFlags[ue.Field]), err: ue}
}

// runFlagNames name the run flags that the data's and the market's
// refusals carry as fields: as the command line does (commandFlags) or as
// a sweep document's run_flags do (recordedFlags).
type runFlagNames struct {
	names map[string]string
	doc   bool
}

var (
	commandFlags = runFlagNames{names: map[string]string{
		data.OptionFrom: "--from", data.OptionTo: "--to", data.OptionTimeframe: "--timeframe",
		backtest.OptionCash: "--cash", backtest.OptionFeeBps: "--fee-bps", backtest.OptionSlippageBps: "--slippage-bps",
	}}
	recordedFlags = runFlagNames{doc: true, names: map[string]string{
		data.OptionFrom: "run_flags.from", data.OptionTo: "run_flags.to", data.OptionTimeframe: "run_flags.timeframe",
		backtest.OptionCash: "run_flags.cash", backtest.OptionFeeBps: "run_flags.fee_bps", backtest.OptionSlippageBps: "run_flags.slippage_bps",
	}}
)

// input maps an error of package data or of the market's options to the
// command's: a problem with a run flag names it, and every problem with
// the data is bad input (exit code 2).
func (n runFlagNames) input(err error) error {
	var ee *ExitError
	var we *data.WindowError
	var oe *data.OptionError
	var me *backtest.OptionError
	var out *data.OutError
	named := func(msg string) error { return usage(&namedError{msg: msg, err: err, doc: n.doc}) }
	switch {
	case errors.As(err, &ee): // a signal stopped the command: 128 + n
		return err
	case errors.As(err, &we) && we.Err == nil:
		return named(fmt.Sprintf("%s %s is before %s %s", n.names[data.OptionTo], we.Value, n.names[data.OptionFrom], we.From))
	case errors.As(err, &we):
		return named(fmt.Sprintf("%s: %v", n.names[we.Option], we.Err))
	case errors.As(err, &oe) && oe.Option == data.OptionTimeframe:
		return named(fmt.Sprintf("%s: %s", n.names[oe.Option], oe.Msg))
	case errors.As(err, &me):
		return named(n.names[me.Option] + " " + me.Msg)
	case errors.As(err, &out):
		return usage(fmt.Errorf("--out %s: %s", out.Path, out.Msg))
	case errors.Is(err, context.Canceled):
		return err
	}
	return usage(err)
}
