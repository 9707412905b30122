package local

import (
	"context"
	"errors"
)

// InputError is bad input a sweep meets as it is set up or as its runs
// start: the strategy file, its MANIFEST, the data, the market's options
// (a command's exit code 2). Err says what, without naming a flag: an
// error of package data or backtest keeps its type (data.OptionError,
// backtest.OptionError) for the command to name the flag.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// inputError is err as an *InputError, unless ctx ended (a stop, not bad
// input).
func inputError(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return err
	}
	return &InputError{err}
}
