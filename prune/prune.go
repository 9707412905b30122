// Package prune is the home's budget: what goes from STRATBENCH_HOME and
// when. Retain runs after each job of a command's own (STRATBENCH_KEEP);
// Plan and Remove are `stratbench prune`: finished jobs and sweeps, never
// a running one, nor a job marked to keep (docs/commands.md, "The home's
// budget: keep and prune"). It decides from the job and sweep stores'
// listings only (a job is its folder, read through its descriptor), and
// looks again under each removal's lock (job.Store.RemoveEnded,
// sweep.Store.RemoveIdle). It names no command-line flag.
package prune

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"stratbench/job"
	"stratbench/sweep"
)

// Options are what a prune removes.
type Options struct {
	// Age: only what finished longer ago; 0 for everything finished.
	Age time.Duration
	// Now is when the prune runs (Age counts back from it).
	Now time.Time
	// Sweep, when set, is the one sweep (a resolved id) that goes, with
	// its runs' jobs; even stopped or unreadable.
	Sweep string
	// Keep, when KeepSet, keeps the Keep most recent jobs of their own and
	// sweeps.
	Keep    int
	KeepSet bool
}

// cutoff is the time before which what finished goes.
func (o Options) cutoff() time.Time { return o.Now.Add(-o.Age) }

// ErrSweepRunning refuses to prune the sweep named (Options.Sweep): it runs.
var ErrSweepRunning = errors.New("the sweep is running")

// Plan is what a prune removes, decided without removing anything.
type Plan struct {
	Sweeps      []string     // the sweeps that go, newest first
	SweepsBytes int64        // their folders' size
	Jobs        []job.Folder // the jobs that go
	Resumable   []string     // stopped or crashed sweeps kept: only a named one goes
	Unreadable  []string     // sweeps whose sweep.json cannot be read, kept: only a named one goes
	Kept        int          // jobs left because they are marked to keep
	// Notes say what the listing left alone, and why, one line each.
	Notes []string
	// marks are the planned sweeps' documents as planned (sweepMark): a
	// sweep whose document changed since is left.
	marks map[string]string
}

// Bytes is the size of what the plan removes.
func (p *Plan) Bytes() int64 {
	n := p.SweepsBytes
	for _, j := range p.Jobs {
		n += j.Bytes
	}
	return n
}

// Empty reports whether the plan removes nothing.
func (p *Plan) Empty() bool { return len(p.Sweeps) == 0 && len(p.Jobs) == 0 }

// sweepMark is what prune compares of a sweep's document (or of why it
// cannot be read) between deciding and removing: its status, end and
// count of results.
func sweepMark(doc *sweep.Document, err error) string {
	if err != nil {
		return "unreadable"
	}
	end := ""
	if doc.FinishedAt != nil {
		end = doc.FinishedAt.Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("%s %s %d", doc.Status, end, doc.Counts.Done)
}

// NewPlan decides what a prune of o removes; it removes nothing. On an
// error after the sweeps were listed, the plan it returns carries the
// notes so far.
func NewPlan(o Options, jobs *job.Store, sweeps *sweep.Store) (*Plan, error) {
	plan := &Plan{marks: map[string]string{}}
	cutoff := o.cutoff()
	old := func(finished *time.Time) bool { return finished != nil && (o.Age == 0 || finished.Before(cutoff)) }
	target := o.Sweep
	ids, err := sweeps.IDs()
	if err != nil {
		return nil, err
	}
	busy := map[string]bool{} // sweeps kept: their runs' jobs are kept too
	removable := 0            // sweeps that could go, newest first, for Keep
	for _, id := range ids {
		if target != "" && id != target {
			busy[id] = true
			continue
		}
		doc, err := sweeps.Load(id)
		running, rerr := sweeps.Running(id)
		var de *sweep.DocumentError
		switch {
		case target != "" && running:
			return nil, ErrSweepRunning
		case errors.As(err, &de) && rerr == nil && !running && target == "":
			// Nothing tells whether it finished: kept, and said, as a
			// stopped one is.
			busy[id] = true
			plan.Unreadable = append(plan.Unreadable, id)
			plan.Notes = append(plan.Notes, fmt.Sprintf("left %s alone: %v", sweeps.Dir(id), de.Err))
			continue
		case errors.As(err, &de) && rerr == nil && !running:
			// Named, it goes: it can be neither shown nor resumed.
		case err != nil || rerr != nil || running || !old(doc.FinishedAt) && doc.Status != sweep.StatusRunning:
			busy[id] = true
			continue
		case target == "" && (doc.Status == sweep.StatusStopped || doc.Status == sweep.StatusRunning):
			// Stopped, or ended by a crash: resumable work, not a finished
			// sweep. Whether a resume would take it (its strategy unchanged)
			// is not asked: the path is the record's, and prune reads
			// nothing outside the home. Age removes it once it has lain
			// stopped that long, naming it at once.
			ended := doc.StartedAt
			if doc.FinishedAt != nil {
				ended = *doc.FinishedAt
			}
			switch {
			case o.Age > 0 && !ended.Before(cutoff):
				busy[id] = true // not long ago
				continue
			case o.Age == 0:
				busy[id] = true
				plan.Resumable = append(plan.Resumable, id)
				continue
			}
		}
		if removable++; o.KeepSet && removable <= o.Keep {
			busy[id] = true // among the Keep most recent
			continue
		}
		plan.Sweeps = append(plan.Sweeps, id)
		plan.marks[id] = sweepMark(doc, err)
		plan.SweepsBytes += job.FolderBytes(sweeps.Dir(id))
	}
	// A job is its folder: those whose job.json records the folder's
	// name as their id; the others are left alone, said.
	folders, bad, err := jobs.JobFolders()
	if err != nil {
		return plan, err // its Notes are said all the same
	}
	for _, re := range bad {
		plan.Notes = append(plan.Notes, fmt.Sprintf("left %s alone: its job.json is not its report (%v)", jobs.JobDir(re.ID), re.Err))
	}
	gone := map[string]bool{}
	for _, id := range plan.Sweeps {
		gone[id] = true
	}
	ownJobs := 0 // jobs that could go and are not runs of a sweep that goes, newest first, for Keep
	for _, f := range folders {
		r := f.Report
		switch {
		case r.Status == job.StatusRunning || !old(r.FinishedAt):
			continue
		case target != "" && (r.Sweep == nil || r.Sweep.ID != target):
			continue
		case r.Sweep != nil && busy[r.Sweep.ID]:
			continue
		case f.Kept:
			plan.Kept++
			continue
		}
		if r.Sweep == nil || !gone[r.Sweep.ID] {
			if ownJobs++; o.KeepSet && ownJobs <= o.Keep {
				continue
			}
		}
		plan.Jobs = append(plan.Jobs, f)
	}
	return plan, nil
}

// Removed is what Remove removed, and what it left.
type Removed struct {
	Sweeps      []string
	SweepsBytes int64
	Jobs        []job.Folder
	// Left says what the plan named and stayed (running again, marked,
	// changed since), one line each.
	Left []string
	// Abandoned is how many folders a sweep's start left when stratbench
	// died in it were removed; Leftovers how many scratch folders of
	// killed checks.
	Abandoned, Leftovers int
}

// Bytes is the size of what was removed.
func (r *Removed) Bytes() int64 {
	n := r.SweepsBytes
	for _, j := range r.Jobs {
		n += j.Bytes
	}
	return n
}

// Remove removes what plan names. Each removal looks again first: while
// the user was asked, a sweep may have been resumed or a job marked to
// keep. Without a sweep named (o.Sweep) it also removes what a sweep's
// creation left when stratbench died making it, and the scratch folders
// of checks that were killed.
func Remove(o Options, plan *Plan, jobs *job.Store, sweeps *sweep.Store) (*Removed, error) {
	done := &Removed{}
	leftSweeps := map[string]bool{}
	for _, id := range plan.Sweeps {
		bytes := job.FolderBytes(sweeps.Dir(id))
		err := sweeps.RemoveIdle(id, func(doc *sweep.Document, err error) bool { return sweepMark(doc, err) == plan.marks[id] })
		if errors.Is(err, sweep.ErrBusy) || errors.Is(err, sweep.ErrChanged) {
			leftSweeps[id] = true
			done.Left = append(done.Left, fmt.Sprintf("sweep %s: %v", id, err))
			continue
		}
		if err != nil {
			return nil, err
		}
		done.Sweeps = append(done.Sweeps, id)
		done.SweepsBytes += bytes
	}
	if o.Sweep == "" {
		var err error
		// What a sweep's creation left when stratbench died making it: a
		// folder that no listing shows as a sweep and no resume can use.
		if done.Abandoned, err = sweeps.RemoveAbandoned(o.cutoff()); err != nil {
			return nil, err
		}
		// And the scratch folders of checks that were killed.
		if done.Leftovers, err = jobs.RemoveLeftovers(); err != nil {
			return nil, err
		}
	}
	for _, j := range plan.Jobs {
		if j.Report.Sweep != nil && leftSweeps[j.Report.Sweep.ID] {
			continue // a run of a sweep left: it stays with it
		}
		err := jobs.RemoveEnded(j.ID)
		if errors.Is(err, job.ErrInUse) || errors.Is(err, job.ErrKept) || errors.Is(err, job.ErrRunning) {
			done.Left = append(done.Left, err.Error())
			continue
		}
		if err != nil {
			return nil, err
		}
		done.Jobs = append(done.Jobs, j)
	}
	return done, nil
}

// sweepsIn returns the ids of the sweeps in the home: their runs' jobs
// are kept with them. It only reads; a home without sweeps has none.
func sweepsIn(home string) (map[string]bool, error) {
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

// Retain removes the jobs of the home that do not fit in budget, after
// job ran (that one is spared whatever its size). It is best effort and
// quiet: it runs after each run of the workbench too, where nothing may
// write on the terminal; what it could not read or remove stays for the
// next run, or for prune.
func Retain(store *job.Store, budget job.Budget, ran string) {
	if budget.Unbounded() {
		return
	}
	sweeps, err := sweepsIn(store.Home())
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
