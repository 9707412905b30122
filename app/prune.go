package app

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"stratbench/internal/shortid"
	"stratbench/present"
	"stratbench/prune"
	"stratbench/sweep"
	"stratbench/ui/components"
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

// Prune removes finished jobs and sweeps (package prune decides which):
// every one, those that finished more than --older-than ago, all but the
// --keep most recent, or one sweep with its runs' jobs. With --dry-run it
// lists them and removes nothing; otherwise it asks at a terminal, and
// refuses without one unless --yes (docs/commands.md).
func Prune(o PruneOptions) error {
	po := prune.Options{Now: time.Now(), Keep: o.Keep, KeepSet: o.KeepSet}
	if o.OlderThan != "" {
		d, err := sweep.ParseDuration(o.OlderThan)
		if err != nil {
			return usage(fmt.Errorf("--older-than: %w", err))
		}
		po.Age = d
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
	if o.Sweep != "" {
		if po.Sweep, err = resolved(shortid.InSweeps(sweeps, o.Sweep)); err != nil {
			return fmt.Errorf("prune --sweep: %w", err)
		}
	}
	plan, err := prune.NewPlan(po, jobs, sweeps)
	if plan != nil {
		for _, note := range plan.Notes {
			fmt.Fprintln(o.Stderr, "stratbench: prune:", note)
		}
	}
	if errors.Is(err, prune.ErrSweepRunning) {
		return usage(fmt.Errorf("prune --sweep %s: %w", po.Sweep, err))
	}
	if err != nil {
		return err
	}
	if o.DryRun {
		present.WritePruneDryRun(o.Stdout, plan, jobs, sweeps)
		return nil
	}
	summary := present.PruneSummary(len(plan.Sweeps), len(plan.Jobs), plan.Bytes())
	if !o.Yes && !plan.Empty() {
		if !components.IsTerminal(o.In) {
			return usage(fmt.Errorf("prune would remove %s: pass --yes to remove them without a terminal to ask at (--dry-run lists them)", summary))
		}
		fmt.Fprintf(o.Stderr, "remove %s? [y/N] ", summary)
		answer, _ := bufio.NewReader(o.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			fmt.Fprintln(o.Stdout, "nothing removed")
			return nil
		}
	}
	done, err := prune.Remove(po, plan, jobs, sweeps)
	if err != nil {
		return fmt.Errorf("prune: %w", err)
	}
	present.WritePruned(o.Stdout, jobs.Home(), plan, done)
	return nil
}
