package app

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"stratbench/job"
	"stratbench/sweep"
)

// keepBudget reads STRATBENCH_KEEP, the home's retention budget
// (docs/commands.md, "The home"). A value that does not parse is bad
// input: the command refuses to run rather than keep too much or too
// little.
func keepBudget() (job.Budget, error) {
	b, err := job.ParseBudget(os.Getenv("STRATBENCH_KEEP"))
	if err != nil {
		return job.Budget{}, usage(err)
	}
	return b, nil
}

// keptSweeps returns the ids of the sweeps in the home: their runs' jobs
// are kept with them. It only reads; a home without sweeps has none.
func keptSweeps(home string) (map[string]bool, error) {
	kept := map[string]bool{}
	if _, err := os.Lstat(filepath.Join(home, "sweeps")); errors.Is(err, fs.ErrNotExist) {
		return kept, nil
	}
	store, err := sweep.OpenStore(home)
	if err != nil {
		return nil, err
	}
	ids, err := store.IDs()
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		kept[id] = true
	}
	return kept, nil
}

// retain removes the jobs of the home that do not fit in budget, after
// job ran (that one is spared whatever its size). It is best effort and
// quiet: it runs after each run of the workbench too, where nothing may
// write on the terminal; what it could not read or remove stays for the
// next run, or for prune.
func retain(store *job.Store, budget job.Budget, ran string) {
	if budget.Unbounded() {
		return
	}
	sweeps, err := keptSweeps(store.Home())
	if err != nil {
		return
	}
	jobs, _, err := store.JobFolders()
	if err != nil {
		return
	}
	ofSweep := func(f job.Folder) bool { return f.Report.Sweep != nil && sweeps[f.Report.Sweep.ID] }
	for _, f := range budget.Over(jobs, ofSweep, ran) {
		// Looked at again as it goes: another stratbench may still use
		// it (printing it, writing its report) or have marked it.
		store.RemoveEnded(f.ID)
	}
}
