package stats

import (
	"fmt"
	"strings"
)

// Kind says what made a statistic refuse its input.
type Kind uint8

// The kinds of *Error.
const (
	// TooFew: fewer observations, runs or trials than the statistic needs
	// (two returns for a standard deviation, two trials for a deflated
	// Sharpe ratio, MinBlocks·MinBlockRows returns for CSCV).
	TooFew Kind = iota + 1
	// NotFinite: a NaN or an infinity among the inputs.
	NotFinite
	// ZeroVariance: the returns do not vary, so the skewness and the
	// kurtosis, and with them the PSR, are undefined.
	ZeroVariance
	// Undefined: the PSR's variance term 1 − γ3·SR + (γ4 − 1)/4·SR² is not
	// positive (moments that no sample can have).
	Undefined
	// BadArgument: an argument outside its documented range (a slice of
	// the wrong length, an odd block count, a negative run count, times out
	// of order).
	BadArgument
)

func (k Kind) String() string {
	switch k {
	case TooFew:
		return "too few observations"
	case NotFinite:
		return "not finite"
	case ZeroVariance:
		return "zero variance"
	case Undefined:
		return "undefined"
	case BadArgument:
		return "bad argument"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Error is every error of the package. errors.Is(err, ErrTooFew) (and the
// other Err values) matches on Kind alone; errors.As gives the details.
type Error struct {
	// Op is the function that refused, such as "PSR" or "CSCV.Add".
	Op string
	// Arg names the argument at fault ("returns", "runs", "blocks",
	// "meanBlock", "trials"...), so that a caller can name its own flag or
	// field for it.
	Arg string
	// Kind says what was wrong.
	Kind Kind
	// Index is the offending element of Arg, or -1 when the fault is not
	// one element's.
	Index int
	// Detail says more, in words; it may be empty.
	Detail string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("stats: ")
	if e.Op != "" {
		b.WriteString(e.Op + ": ")
	}
	if e.Arg != "" {
		b.WriteString(e.Arg)
		if e.Index >= 0 {
			fmt.Fprintf(&b, "[%d]", e.Index)
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Kind.String())
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	return b.String()
}

// Is matches the Err values, which carry a Kind and nothing else.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Op == "" && t.Arg == "" && t.Detail == "" && t.Kind == e.Kind
}

// Targets for errors.Is, one per Kind.
var (
	ErrTooFew       = &Error{Kind: TooFew, Index: -1}
	ErrNotFinite    = &Error{Kind: NotFinite, Index: -1}
	ErrZeroVariance = &Error{Kind: ZeroVariance, Index: -1}
	ErrUndefined    = &Error{Kind: Undefined, Index: -1}
	ErrBadArgument  = &Error{Kind: BadArgument, Index: -1}
)

func errorf(op, arg string, kind Kind, index int, format string, a ...any) *Error {
	return &Error{Op: op, Arg: arg, Kind: kind, Index: index, Detail: fmt.Sprintf(format, a...)}
}

// withOp renames the function of a package error passed up by a caller.
func withOp(err error, op string) error {
	if e, ok := err.(*Error); ok {
		c := *e
		c.Op = op
		return &c
	}
	return err
}

// checkFinite returns the first element of xs that is NaN or infinite as
// an error of op, or nil.
func checkFinite(op, arg string, xs []float64) error {
	for i, x := range xs {
		if x-x != 0 { // NaN or ±Inf
			return errorf(op, arg, NotFinite, i, "%v", x)
		}
	}
	return nil
}

func finite(x float64) bool { return x-x == 0 }
