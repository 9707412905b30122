package shortid

import (
	"os"
	"path/filepath"
	"strings"

	"stratbench/job"
	"stratbench/sweep"
)

// RefusedError is an id the user typed that the stores' ids refuse (it
// fits none, or several): bad input. The stores' own errors (a folder that
// cannot be read) are returned as they are.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// refused is err as a *RefusedError, or nil.
func refused(err error) error {
	if err != nil {
		return &RefusedError{Err: err}
	}
	return nil
}

// InJobs resolves typed (Job) among store's jobs.
func InJobs(store *job.Store, typed string) (string, error) {
	ids, err := store.IDs()
	if err != nil {
		return "", err
	}
	id, err := Job(ids, typed)
	return id, refused(err)
}

// InSweeps resolves typed (Sweep) among store's sweeps.
func InSweeps(store *sweep.Store, typed string) (string, error) {
	ids, err := store.IDs()
	if err != nil {
		return "", err
	}
	id, err := Sweep(ids, typed)
	return id, refused(err)
}

// ExistingSweeps opens home's sweeps folder for reading, or returns nil
// when there is none: what only reads (completion, listings, a job's
// lookup) must not create one.
func ExistingSweeps(home string) *sweep.Store {
	if _, err := os.Stat(filepath.Join(home, "sweeps")); err != nil {
		return nil
	}
	store, err := sweep.OpenStore(home)
	if err != nil {
		return nil
	}
	return store
}

// CompleteSweeps returns home's sweep ids that start with prefix, newest
// first, for shell completion. It only reads: without a sweeps folder it
// offers nothing rather than create one.
func CompleteSweeps(home, prefix string) []string {
	store := ExistingSweeps(home)
	if store == nil {
		return nil
	}
	ids, _ := store.IDs()
	var out []string
	for _, id := range ids {
		if strings.HasPrefix(id, prefix) {
			out = append(out, id)
		}
	}
	return out
}

// Complete returns home's ids that start with prefix, for shell
// completion: the jobs' (job.Store.Complete) when jobs, then the sweeps'
// (CompleteSweeps) when sweeps, each newest first. It only reads: it
// recovers no job, kills no process tree and writes no file.
func Complete(home, prefix string, jobs, sweeps bool) []string {
	var out []string
	if jobs {
		out = job.ReadStore(home).Complete(prefix)
	}
	if sweeps {
		out = append(out, CompleteSweeps(home, prefix)...)
	}
	return out
}

// Target resolves the id of `status` or `report` (Status) among home's
// jobs and sweeps, and returns the store it is in: the jobs' (opened by
// openJobs) for a job, the sweeps' for a sweep. An id that starts with
// "sw-" does not open the jobs' store, and looking up a job creates no
// sweeps folder.
func Target(home string, openJobs func() (*job.Store, error), typed string) (id string, jobs *job.Store, sweeps *sweep.Store, isSweep bool, err error) {
	var jobIDs, sweepIDs []string
	if !strings.HasPrefix(typed, sweep.IDPrefix) {
		if jobs, err = openJobs(); err != nil {
			return "", nil, nil, false, err
		}
		if jobIDs, err = jobs.IDs(); err != nil {
			return "", nil, nil, false, err
		}
	}
	if _, serr := os.Stat(filepath.Join(home, "sweeps")); serr == nil || strings.HasPrefix(typed, sweep.IDPrefix) {
		if sweeps, err = sweep.OpenStore(home); err != nil {
			return "", nil, nil, false, err
		}
		if sweepIDs, err = sweeps.IDs(); err != nil {
			return "", nil, nil, false, err
		}
	}
	id, isSweep, err = Status(jobIDs, sweepIDs, typed)
	return id, jobs, sweeps, isSweep, refused(err)
}
