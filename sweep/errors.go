package sweep

import (
	"strconv"
	"strings"
)

// UsageError is a sweep that cannot run as asked: a spec, a walk-forward or
// a reference the user must change (exit code 2). Every refusal of the
// package is a *UsageError, returned before any run starts.
type UsageError struct {
	// Flag is the command-line flag at fault, such as "--grid"; for a
	// problem of the whole spec it is the flag that made it one (the
	// --grid whose values take the grid past its limit).
	Flag string

	// Arg is the flag's argument as the user gave it; empty when the
	// problem is not with one argument.
	Arg string

	// Reason says what is wrong, in words a user can act on.
	Reason string
}

func (e *UsageError) Error() string {
	if e.Arg == "" {
		return e.Flag + ": " + e.Reason
	}
	return e.Flag + " " + quoteArg(e.Arg) + ": " + e.Reason
}

// quoteArg quotes an argument that would not read as one word.
func quoteArg(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"'\\") || !strconv.CanBackquote(s) {
		return strconv.Quote(s)
	}
	return s
}

func usage(flag, arg, reason string) *UsageError {
	return &UsageError{Flag: flag, Arg: arg, Reason: reason}
}
