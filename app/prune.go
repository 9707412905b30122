package app

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"

	"stratbench/internal/units"
	"stratbench/job"
	"stratbench/present"
	"stratbench/sweep"
)

// PruneOptions are the options of `stratbench prune`.
type PruneOptions struct {
	OlderThan string // --older-than DUR: only what finished longer ago; "" for everything finished
	Sweep     string // --sweep ID: only this sweep and its runs
	DryRun    bool   // --dry-run: say what would go, remove nothing
	Keep      int    // --keep N: keep the N most recent jobs of their own and sweeps, when KeepSet
	KeepSet   bool
	Yes       bool      // --yes: remove without asking
	In        io.Reader // the answer to the question; a terminal is asked
	Streams
}

// prunePlan is what a prune removes.
type prunePlan struct {
	sweeps      []string
	sweepsBytes int64
	jobs        []job.Folder
	resumable   []string // stopped or crashed sweeps kept: only --sweep removes one
	unreadable  []string // sweeps whose sweep.json cannot be read: only --sweep removes one
	kept        int      // jobs left because they are marked to keep
	// marks are the planned sweeps' documents as planned (sweepMark): a
	// sweep whose document changed since is left.
	marks map[string]string
}

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

func (p *prunePlan) bytes() int64 {
	n := p.sweepsBytes
	for _, j := range p.jobs {
		n += j.Bytes
	}
	return n
}

func (p *prunePlan) summary() string {
	return fmt.Sprintf("%s and %s (%s)", present.Counted(len(p.sweeps), "sweep", "sweeps"),
		present.Counted(len(p.jobs), "job", "jobs"), units.Bytes(p.bytes()))
}

// Prune removes finished jobs and sweeps (never a running one, nor a job
// marked with `stratbench keep`): every one, those that finished more
// than --older-than ago, all but the --keep most recent, or one sweep
// with its runs' jobs. With --dry-run it lists them and removes nothing;
// otherwise it asks at a terminal, and refuses without one unless --yes
// (docs/commands.md).
func Prune(o PruneOptions) error {
	var age time.Duration
	if o.OlderThan != "" {
		d, err := sweep.ParseDuration(o.OlderThan)
		if err != nil {
			return usage(fmt.Errorf("--older-than: %w", err))
		}
		age = d
	}
	if o.KeepSet && o.Keep < 0 {
		return usage(fmt.Errorf("--keep %d: a number of jobs, 0 or more", o.Keep))
	}
	if o.KeepSet && o.Sweep != "" {
		return usage(errors.New("--keep goes with every job and sweep, not with --sweep ID (which removes that one sweep)"))
	}
	jobs, err := openStore(o.Stderr)
	if err != nil {
		return err
	}
	sweeps, err := sweep.OpenStore(jobs.Home())
	if err != nil {
		return err
	}
	cutoff := time.Now().Add(-age)
	plan, err := planPrune(o, jobs, sweeps, age, cutoff)
	if err != nil {
		return err
	}
	if o.DryRun {
		printPlan(o.Stdout, plan, jobs, sweeps)
		fmt.Fprintf(o.Stdout, "would remove %s; nothing removed (--dry-run)\n", plan.summary())
		return nil
	}
	if !o.Yes && (len(plan.sweeps) > 0 || len(plan.jobs) > 0) {
		f, ok := o.In.(*os.File)
		if !ok || !term.IsTerminal(f.Fd()) {
			return usage(fmt.Errorf("prune would remove %s: pass --yes to remove them without a terminal to ask at (--dry-run lists them)", plan.summary()))
		}
		fmt.Fprintf(o.Stderr, "remove %s? [y/N] ", plan.summary())
		answer, _ := bufio.NewReader(o.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			fmt.Fprintln(o.Stdout, "nothing removed")
			return nil
		}
	}
	// Each removal looks again first: while prune asked, a sweep may have
	// been resumed or a job marked to keep.
	done := &prunePlan{}
	var left []string // what is left, and why
	leftSweeps := map[string]bool{}
	for _, id := range plan.sweeps {
		bytes := job.FolderBytes(sweeps.Dir(id))
		err := sweeps.RemoveIdle(id, func(doc *sweep.Document, err error) bool { return sweepMark(doc, err) == plan.marks[id] })
		if errors.Is(err, sweep.ErrBusy) || errors.Is(err, sweep.ErrChanged) {
			leftSweeps[id] = true
			left = append(left, fmt.Sprintf("sweep %s: %v", id, err))
			continue
		}
		if err != nil {
			return fmt.Errorf("prune: %w", err)
		}
		done.sweeps = append(done.sweeps, id)
		done.sweepsBytes += bytes
	}
	abandoned, leftovers := 0, 0
	if o.Sweep == "" {
		// What a sweep's creation left when stratbench died making it: a
		// folder that no listing shows as a sweep and no resume can use.
		if abandoned, err = sweeps.RemoveAbandoned(cutoff); err != nil {
			return fmt.Errorf("prune: %w", err)
		}
		// And the scratch folders of checks that were killed.
		if leftovers, err = jobs.RemoveLeftovers(); err != nil {
			return fmt.Errorf("prune: %w", err)
		}
	}
	for _, j := range plan.jobs {
		if j.Report.Sweep != nil && leftSweeps[j.Report.Sweep.ID] {
			continue // a run of a sweep left: it stays with it
		}
		err := jobs.RemoveEnded(j.ID)
		if errors.Is(err, job.ErrInUse) || errors.Is(err, job.ErrKept) || errors.Is(err, job.ErrRunning) {
			left = append(left, err.Error())
			continue
		}
		if err != nil {
			return fmt.Errorf("prune: %w", err)
		}
		done.jobs = append(done.jobs, j)
	}
	fmt.Fprintf(o.Stdout, "removed %s\n", done.summary())
	for _, why := range left {
		fmt.Fprintf(o.Stdout, "left %s\n", why)
	}
	if abandoned > 0 {
		fmt.Fprintf(o.Stdout, "removed %s that a sweep's start left when stratbench died in it\n",
			present.Counted(abandoned, "folder", "folders"))
	}
	if leftovers > 0 {
		fmt.Fprintf(o.Stdout, "removed %s that a killed check left in %s\n",
			present.Counted(leftovers, "scratch folder", "scratch folders"), filepath.Join(jobs.Home(), "tmp"))
	}
	if plan.kept > 0 {
		fmt.Fprintf(o.Stdout, "kept %s marked with `stratbench keep` (keep --undo ID unmarks one)\n", present.Counted(plan.kept, "job", "jobs"))
	}
	if len(plan.resumable) > 0 {
		fmt.Fprintf(o.Stdout, "kept %s, resumable (sweep --resume ID); prune --sweep ID removes one: %s\n",
			present.Counted(len(plan.resumable), "stopped sweep", "stopped sweeps"), strings.Join(plan.resumable, " "))
	}
	if len(plan.unreadable) > 0 {
		fmt.Fprintf(o.Stdout, "kept %s whose %s cannot be read; prune --sweep ID removes one: %s\n",
			present.Counted(len(plan.unreadable), "sweep", "sweeps"), sweep.DocumentFile, strings.Join(plan.unreadable, " "))
	}
	return nil
}

// planPrune decides what a prune removes; it removes nothing.
func planPrune(o PruneOptions, jobs *job.Store, sweeps *sweep.Store, age time.Duration, cutoff time.Time) (*prunePlan, error) {
	plan := &prunePlan{marks: map[string]string{}}
	old := func(finished *time.Time) bool { return finished != nil && (age == 0 || finished.Before(cutoff)) }
	target := ""
	if o.Sweep != "" {
		var err error
		if target, err = storeSweepID(sweeps, o.Sweep); err != nil {
			return nil, fmt.Errorf("prune --sweep: %w", err)
		}
	}
	ids, err := sweeps.IDs()
	if err != nil {
		return nil, err
	}
	busy := map[string]bool{} // sweeps kept: their runs' jobs are kept too
	removable := 0            // sweeps that could go, newest first, for --keep
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
			return nil, usage(fmt.Errorf("prune --sweep %s: the sweep is running", id))
		case errors.As(err, &de) && rerr == nil && !running && target == "":
			// Nothing tells whether it finished: kept, and said, as a
			// stopped one is.
			busy[id] = true
			plan.unreadable = append(plan.unreadable, id)
			fmt.Fprintf(o.Stderr, "stratbench: prune: left %s alone: %v\n", sweeps.Dir(id), de.Err)
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
			// nothing outside the home. --older-than removes it once it
			// has lain stopped that long, --sweep at once.
			ended := doc.StartedAt
			if doc.FinishedAt != nil {
				ended = *doc.FinishedAt
			}
			switch {
			case age > 0 && !ended.Before(cutoff):
				busy[id] = true // not long ago
				continue
			case age == 0:
				busy[id] = true
				plan.resumable = append(plan.resumable, id)
				continue
			}
		}
		if removable++; o.KeepSet && removable <= o.Keep {
			busy[id] = true // among the --keep most recent
			continue
		}
		plan.sweeps = append(plan.sweeps, id)
		plan.marks[id] = sweepMark(doc, err)
		plan.sweepsBytes += job.FolderBytes(sweeps.Dir(id))
	}
	// A job is its folder: those whose job.json records the folder's
	// name as their id; the others are left alone, said.
	folders, bad, err := jobs.JobFolders()
	if err != nil {
		return nil, err
	}
	for _, re := range bad {
		fmt.Fprintf(o.Stderr, "stratbench: prune: left %s alone: its job.json is not its report (%v)\n", jobs.JobDir(re.ID), re.Err)
	}
	gone := map[string]bool{}
	for _, id := range plan.sweeps {
		gone[id] = true
	}
	ownJobs := 0 // jobs that could go and are not runs of a sweep that goes, newest first, for --keep
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
			plan.kept++
			continue
		}
		if r.Sweep == nil || !gone[r.Sweep.ID] {
			if ownJobs++; o.KeepSet && ownJobs <= o.Keep {
				continue
			}
		}
		plan.jobs = append(plan.jobs, f)
	}
	return plan, nil
}

// printPlan lists what a prune would remove, one line each.
func printPlan(w io.Writer, plan *prunePlan, jobs *job.Store, sweeps *sweep.Store) {
	for _, id := range plan.sweeps {
		fmt.Fprintf(w, "sweep  %s  %s\n", id, sweeps.Dir(id))
	}
	for _, f := range plan.jobs {
		fmt.Fprintf(w, "job    %s  %10s  %s\n", f.ID, units.Bytes(f.Bytes), jobs.JobDir(f.ID))
	}
}
