package app

import (
	"fmt"
	"os"

	"stratbench/internal/shortid"
	"stratbench/job"
	"stratbench/present"
)

// KeepOptions are the options of `stratbench keep`.
type KeepOptions struct {
	IDs  []string // the jobs to mark (or unmark); none: list the marked jobs
	Undo bool     // --undo: remove the mark
	Streams
}

// Keep marks jobs to keep: the home's retention budget and prune leave
// them (docs/commands.md, "The home"). With --undo it removes the mark;
// with no job it lists the jobs marked.
func Keep(o KeepOptions) error {
	store, err := openStore(o.Stderr)
	if err != nil {
		return err
	}
	if len(o.IDs) == 0 {
		if o.Undo {
			return usage(fmt.Errorf("keep --undo: name the jobs to unmark (stratbench keep lists the marked ones)"))
		}
		folders, _, err := store.JobFolders()
		if err != nil {
			return err
		}
		present.WriteKept(o.Stdout, folders, store)
		return nil
	}
	for _, typed := range o.IDs {
		id, err := resolved(shortid.InJobs(store, typed))
		if err != nil {
			return err
		}
		if o.Undo {
			err = store.Unkeep(id)
		} else {
			err = store.Keep(id)
		}
		if err != nil {
			return usage(err)
		}
		if o.Undo {
			fmt.Fprintf(o.Stdout, "%s is no longer marked to keep\n", id)
		} else {
			fmt.Fprintf(o.Stdout, "kept %s: retention and prune leave it (keep --undo %s unmarks it)\n", id, id)
		}
	}
	return nil
}

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
