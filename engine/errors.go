package engine

import "strings"

// UsageError is a problem with what the user asked for (exit code 2), as
// opposed to a failure of the strategy.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// SaveError is Wait's error when the job ran but its folder could not be
// written in full (a full disk, say): the report is complete in memory and
// lists the same in SaveErrors.
type SaveError struct {
	JobID  string
	Errors []string // each names the path and the system's reason
}

func (e *SaveError) Error() string {
	return "job " + e.JobID + " not saved in full: " + strings.Join(e.Errors, "; ")
}
