package app

import (
	"os"
	"path/filepath"
	"stratbench/internal/shortid"
	"stratbench/job"
	"stratbench/sweep"
	"strings"
)

// statusTarget resolves the id of `status` (by shortid.Status) and opens
// the store it is in: the sweeps' for a sweep, else the jobs'. An id that
// starts with "sw-" does not open the jobs' store, as before.
func statusTarget(o StatusOptions) (id string, jobs *job.Store, sweeps *sweep.Store, isSweep bool, err error) {
	home, err := job.DefaultHome()
	if err != nil {
		return "", nil, nil, false, err
	}
	var jobIDs, sweepIDs []string
	if !strings.HasPrefix(o.ID, sweep.IDPrefix) {
		if jobs, err = openStore(o.Stderr); err != nil {
			return "", nil, nil, false, err
		}
		if jobIDs, err = jobs.IDs(); err != nil {
			return "", nil, nil, false, err
		}
	}
	// Without a sweeps folder there are no sweeps: looking up a job
	// creates none.
	if _, serr := os.Stat(filepath.Join(home, "sweeps")); serr == nil || strings.HasPrefix(o.ID, sweep.IDPrefix) {
		if sweeps, err = sweep.OpenStore(home); err != nil {
			return "", nil, nil, false, err
		}
		if sweepIDs, err = sweeps.IDs(); err != nil {
			return "", nil, nil, false, err
		}
	}
	id, isSweep, err = shortid.Status(jobIDs, sweepIDs, o.ID)
	return id, jobs, sweeps, isSweep, usageOr(err)
}

// storeJobID resolves typed among the store's jobs.
func storeJobID(store *job.Store, typed string) (string, error) {
	ids, err := store.IDs()
	if err != nil {
		return "", err
	}
	return resolveJobID(ids, typed)
}

// storeSweepID resolves typed among the store's sweeps.
func storeSweepID(store *sweep.Store, typed string) (string, error) {
	ids, err := store.IDs()
	if err != nil {
		return "", err
	}
	return resolveSweepID(ids, typed)
}

// CompleteSweeps returns the sweep ids that start with prefix, newest
// first, for shell completion. Like CompleteJobs it only reads: without a
// sweeps folder it offers nothing rather than create one.
func CompleteSweeps(prefix string) []string {
	store := existingSweepStore()
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

// existingSweepStore opens the sweeps folder of STRATBENCH_HOME for
// reading, or returns nil when there is none: what only reads (completion,
// listings) must not create one.
func existingSweepStore() *sweep.Store {
	home, err := job.DefaultHome()
	if err != nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(home, "sweeps")); err != nil {
		return nil
	}
	store, err := sweep.OpenStore(home)
	if err != nil {
		return nil
	}
	return store
}

// resolveJobID resolves a job id as the user typed it (shortid.Job): a
// refusal is bad usage, exit 2.
func resolveJobID(ids []string, typed string) (string, error) {
	id, err := shortid.Job(ids, typed)
	return id, usageOr(err)
}

// resolveSweepID is resolveJobID for sweeps (shortid.Sweep).
func resolveSweepID(ids []string, typed string) (string, error) {
	id, err := shortid.Sweep(ids, typed)
	return id, usageOr(err)
}

// usageOr is err as bad usage (exit 2), or nil.
func usageOr(err error) error {
	if err != nil {
		return usage(err)
	}
	return nil
}
