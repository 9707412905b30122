package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"

	"stratbench/internal/shortid"
	"stratbench/job"
	"stratbench/sweep"
	"stratbench/sweep/local"
	"stratbench/sweep/ray"
)

// resumeSweep runs what a sweep has no result for, with the flags it
// started with; it refuses a strategy or data that changed since.
// With --executor ray it reaches the cluster only when the sweep has runs
// left: a finished sweep resumes to nothing, without it.
func resumeSweep(ctx context.Context, o SweepOptions, st *sweepSetup) error {
	onRay := o.Executor == string(sweep.ExecutorRay)
	home, err := job.DefaultHome()
	if err != nil {
		return err
	}
	store, err := sweep.OpenStore(home)
	if err != nil {
		return err
	}
	id, err := resolved(shortid.InSweeps(store, o.Resume))
	if err != nil {
		return fmt.Errorf("--resume: %w", err)
	}
	c, err := local.Claim(st.Context(), store, id)
	var le *local.LoadError
	switch {
	case errors.Is(err, sweep.ErrBusy):
		return usage(fmt.Errorf("--resume %s: %w", id, sweep.ErrBusy)) // err names the id again
	case errors.Is(err, local.ErrNoRunFlags):
		return usage(fmt.Errorf("--resume %s: %w", id, err))
	case errors.As(err, &le):
		return asSweepExit(le.Err)
	case err != nil:
		return err
	}
	defer c.Results.Close() // runSweep closes them too: a second Close does nothing
	doc := c.Doc
	rf := doc.RunFlags
	docPath := filepath.Join(store.Dir(id), sweep.DocumentFile)
	ro := o.RunOptions
	ro.recorded = true // refusals name run_flags.from, not a --from the user did not give
	ro.Strategy, ro.Data, ro.From, ro.To, ro.Timeframe = doc.Strategy.Path, rf.Data, rf.From, rf.To, rf.Timeframe
	ro.Cash, ro.FeeBps, ro.SlippageBps, ro.AllowShort = rf.Cash, rf.FeeBps, rf.SlippageBps, rf.AllowShort
	ro.Python, ro.Sandbox, ro.Params = rf.Python, rf.Sandbox, nil
	strategy, sum, err := local.ReadStrategy(ro.Strategy)
	if err != nil {
		return inputExit(err)
	}
	jobs := doc.Spec.Jobs
	if o.Jobs > 0 || onRay {
		jobs = o.Jobs
	} else if err := sweep.CheckJobs(jobs); err != nil {
		// The document's own count, edited (or of a cluster larger than
		// a local pool takes): refused as --jobs would be.
		return usage(fmt.Errorf("--resume %s: %s: %w (--jobs N runs it on N slots instead)", id, docPath, sweepNamed(err, true)))
	}
	if jobs < 1 && !onRay {
		jobs = runtime.NumCPU()
	}
	op, err := openSweepSession(st.Context(), ro, strategy, jobs, !onRay)
	if err != nil {
		return withRunFlags(id, docPath, err)
	}
	defer op.Close()
	s, sd := op.Session, op.Data
	fingerprint, err := sd.Fingerprint(st.Context())
	if err != nil {
		return usage(err)
	}
	if err := sweep.CheckResume(doc, sum, fingerprint); err != nil {
		return asSweepExit(err)
	}
	// Runs that ran here and will run here: their interpreter's version
	// must not have changed.
	localAgain := !onRay && doc.Executor.Kind == sweep.ExecutorLocal
	if localAgain {
		if err := local.CheckPython(doc, s.Python(), s.Store().Load); err != nil {
			return pythonChanged(doc, err)
		}
	}
	if err := st.Context().Err(); err != nil {
		return err // a stop signal during the setup
	}
	if doc.Status == sweep.StatusPassed || doc.Status == sweep.StatusFailed {
		// Every run has its result: nothing runs, and the document (its
		// timing included) is left as it is. (The strategy and the data
		// were checked all the same: a resume refuses a change, docs/sweeps.md.)
		fmt.Fprintf(o.Stderr, "stratbench: sweep %s has finished (%s): every run has its result, nothing to resume "+
			"(`stratbench sweep view %s` opens it in the sweep view)\n", id, doc.Status, id)
		if err := newSweepPrinter(o, doc, doc.Counts.Total, doc.Counts.Done).Finish(); err != nil {
			return err
		}
		if doc.Status == sweep.StatusFailed {
			return failed()
		}
		return nil
	}
	var rayc *ray.Cluster
	if onRay {
		if rayc, err = openRay(st.Context(), o); err != nil {
			return err
		}
		defer rayc.Close()
	}
	note := stderrNote(o.Stderr)
	sr, err := local.Resume(st.Context(), op, local.Resumed{Store: store, Doc: doc, Results: c.Results, Prior: c.Back.Results,
		Strategy: strategy, Sum: sum, Jobs: jobs, Local: !onRay, Cut: cutNote(note), Note: note})
	if err != nil {
		return inDocument(id, docPath, setupExit(err))
	}
	if c.Back.Note != "" {
		fmt.Fprintln(o.Stderr, "stratbench:", c.Back.Note)
	}
	o.RunOptions = ro
	if rayc != nil {
		if err := useRay(st.Context(), o, sr, s, rayc, jobs, ""); err != nil {
			return sr.Abandon(err)
		}
	}
	return runSweep(ctx, o, sr, s, st)
}

// pythonChanged names the interpreter of a resume that local.CheckPython
// refused (as --python, or as the one stratbench finds): exit 2.
func pythonChanged(doc *sweep.Document, err error) error {
	var pe *local.PythonChangedError
	if !errors.As(err, &pe) {
		return err
	}
	what := "--python " + doc.RunFlags.Python
	if doc.RunFlags.Python == "" {
		what = "the interpreter it finds ($STRATBENCH_PYTHON, $VIRTUAL_ENV, python3)"
	}
	return usage(fmt.Errorf("--resume %s: the sweep's runs ran Python %s (%s), and %s is now Python %s (%s): "+
		"the runs would not be comparable; start a new sweep", doc.SweepID, pe.Ran, pe.How, what, pe.Now.Version, pe.Now.Executable))
}

// inDocument names sweep id's sweep.json (docPath) in a refusal of a
// value read from it (a Saved *sweep.UsageError, as a restored spec's
// are, named as the document's field), which would otherwise read as a
// flag the user never gave. Other errors are returned as they are.
func inDocument(id, docPath string, err error) error {
	var ue *sweep.UsageError
	if !errors.As(err, &ue) || !ue.Saved {
		return err
	}
	return fmt.Errorf("--resume %s: %s: %w", id, docPath, sweepNamed(err, true))
}

// withRunFlags says that a resume's bad input (exit 2) comes from the run
// flags sweep id's document (docPath) records, which the session and the
// data were opened with: a refusal that names the document's field
// (run_flags.from) names the document, and any other says that its flag
// (--python, --data), which the user of a resume did not give, is the
// document's.
func withRunFlags(id, docPath string, err error) error {
	var ne *namedError
	if errors.As(err, &ne) && ne.doc {
		return fmt.Errorf("--resume %s: %s: %w", id, docPath, err)
	}
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitUsage {
		return err
	}
	return fmt.Errorf("--resume %s: with the run flags %s records (run_flags): %w", id, docPath, err)
}
