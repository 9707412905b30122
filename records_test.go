package main

import (
	"io"

	"stratbench/job"
)

// openRecord opens a record of job id in the test's home, as CSV text,
// through the one reader every command uses.
func (e *env) openRecord(id string, rec job.Record) io.ReadCloser {
	e.t.Helper()
	store, err := job.OpenStore(e.home)
	if err != nil {
		e.t.Fatal(err)
	}
	f, err := store.OpenRecord(id, rec)
	if err != nil {
		e.t.Fatal(err)
	}
	return f
}
