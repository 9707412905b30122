package present

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"stratbench/internal/units"
	"stratbench/job"
	"stratbench/prune"
	"stratbench/sweep"
)

// PruneSummary says how much goes: "2 sweeps and 5 jobs (1.2 MB)".
func PruneSummary(sweeps, jobs int, bytes int64) string {
	return fmt.Sprintf("%s and %s (%s)", Counted(sweeps, "sweep", "sweeps"), Counted(jobs, "job", "jobs"), units.Bytes(bytes))
}

// WritePruneDryRun lists what plan would remove, each with its folder in
// jobs' and sweeps' stores, and says that nothing was (prune --dry-run).
func WritePruneDryRun(w io.Writer, plan *prune.Plan, jobs *job.Store, sweeps *sweep.Store) {
	for _, id := range plan.Sweeps {
		fmt.Fprintf(w, "sweep  %s  %s\n", id, sweeps.Dir(id))
	}
	for _, f := range plan.Jobs {
		fmt.Fprintf(w, "job    %s  %10s  %s\n", f.ID, units.Bytes(f.Bytes), jobs.JobDir(f.ID))
	}
	fmt.Fprintf(w, "would remove %s; nothing removed (--dry-run)\n", PruneSummary(len(plan.Sweeps), len(plan.Jobs), plan.Bytes()))
}

// WritePruned says what a prune of plan removed (done) from the home, and
// what it kept and why.
func WritePruned(w io.Writer, home string, plan *prune.Plan, done *prune.Removed) {
	fmt.Fprintf(w, "removed %s\n", PruneSummary(len(done.Sweeps), len(done.Jobs), done.Bytes()))
	for _, why := range done.Left {
		fmt.Fprintf(w, "left %s\n", why)
	}
	if done.Abandoned > 0 {
		fmt.Fprintf(w, "removed %s that a sweep's start left when stratbench died in it\n",
			Counted(done.Abandoned, "folder", "folders"))
	}
	if done.Leftovers > 0 {
		fmt.Fprintf(w, "removed %s that a killed check left in %s\n",
			Counted(done.Leftovers, "scratch folder", "scratch folders"), filepath.Join(home, "tmp"))
	}
	if plan.Kept > 0 {
		fmt.Fprintf(w, "kept %s marked with `stratbench keep` (keep --undo ID unmarks one)\n", Counted(plan.Kept, "job", "jobs"))
	}
	if len(plan.Resumable) > 0 {
		fmt.Fprintf(w, "kept %s, resumable (sweep --resume ID); prune --sweep ID removes one: %s\n",
			Counted(len(plan.Resumable), "stopped sweep", "stopped sweeps"), strings.Join(plan.Resumable, " "))
	}
	if len(plan.Unreadable) > 0 {
		fmt.Fprintf(w, "kept %s whose %s cannot be read; prune --sweep ID removes one: %s\n",
			Counted(len(plan.Unreadable), "sweep", "sweeps"), sweep.DocumentFile, strings.Join(plan.Unreadable, " "))
	}
}

// WriteKept lists the jobs marked to keep among folders, each with its
// status, size and folder in store (`stratbench keep` without a job).
func WriteKept(w io.Writer, folders []job.Folder, store *job.Store) {
	n := 0
	for _, f := range folders {
		if f.Kept {
			n++
			fmt.Fprintf(w, "%s  %-7s  %10s  %s\n", f.ID, f.Report.Status, units.Bytes(f.Bytes), store.JobDir(f.ID))
		}
	}
	if n == 0 {
		fmt.Fprintln(w, "no job is marked to keep (stratbench keep JOB_ID marks one)")
	}
}
