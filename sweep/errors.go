package sweep

import (
	"strconv"
	"strings"
)

// Field is what a refusal is about: a part of a sweep's spec, or of how
// it is named or resumed. The package names no command-line flag: a
// command names the flag that gave the value (--grid for FieldGrid), or,
// for a value read back from a sweep's document (UsageError.Saved), the
// document's field (DocField: spec.grid).
type Field string

// The fields of UsageError. Those of the spec are named as the sweep
// document's "spec" names them.
const (
	FieldParams      Field = "params"       // the fixed params (--param)
	FieldGrid        Field = "grid"         // the swept params
	FieldConstraint  Field = "constraint"   // the constraint on the combinations
	FieldRandom      Field = "random"       // the size of the sample
	FieldMetric      Field = "metric"       // the objective's metric
	FieldWalkForward Field = "walk_forward" // the walk-forward
	FieldJobs        Field = "jobs"         // the runs at once
	// FieldResume is the sweep a resume names: what it finds changed.
	FieldResume Field = "resume"
	// FieldID is a sweep id as typed (Store.Resolve).
	FieldID Field = "id"
)

// DocField is the sweep document's field that keeps f: "spec.grid".
func (f Field) DocField() string { return "spec." + string(f) }

// UsageError is a sweep that cannot run as asked: a spec, a walk-forward or
// a reference the user must change (exit code 2). Every refusal of the
// package is a *UsageError, returned before any run starts, and never
// wrapped: a command names Field as its flag (Named) and prints it.
type UsageError struct {
	// Field is the part of the sweep at fault; for a problem of the whole
	// spec it is the part that made it one (the grid whose values take it
	// past its limit).
	Field Field

	// Saved is set when the value came from a sweep's document (a spec
	// read back by RestoreSpec) rather than from the command line: it is
	// named as the document's field (Field.DocField).
	Saved bool

	// Arg is the value as the user gave it; empty when the problem is not
	// with one argument.
	Arg string

	// Reason says what is wrong, in words a user can act on.
	Reason string
}

// Error names the field as the document does when the value is Saved,
// else by the field alone; a command names the flag instead (Named).
func (e *UsageError) Error() string {
	if e.Saved {
		return e.Named(e.Field.DocField())
	}
	return e.Named(string(e.Field))
}

// Named is the refusal's message with the field named name (a flag).
func (e *UsageError) Named(name string) string {
	if e.Arg == "" {
		return name + ": " + e.Reason
	}
	return name + " " + quoteArg(e.Arg) + ": " + e.Reason
}

// quoteArg quotes an argument that would not read as one word.
func quoteArg(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"'\\") || !strconv.CanBackquote(s) {
		return strconv.Quote(s)
	}
	return s
}

func usage(field Field, arg, reason string) *UsageError {
	return &UsageError{Field: field, Arg: arg, Reason: reason}
}
