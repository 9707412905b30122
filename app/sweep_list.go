package app

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"stratbench/internal/termtext"
	"stratbench/job"
	"stratbench/present"
	"stratbench/sweep"
	"stratbench/ui/components"
)

// SweepsOptions are the options of `stratbench sweeps`.
type SweepsOptions struct {
	Output string // "text" or "json"
	Streams
}

// openSweepStore opens the sweeps folder of STRATBENCH_HOME.
func openSweepStore() (*sweep.Store, error) {
	home, err := job.DefaultHome()
	if err != nil {
		return nil, err
	}
	return sweep.OpenStore(home)
}

// Sweeps lists past sweeps, newest first (as text, or as their documents
// without the runs).
func Sweeps(o SweepsOptions) error {
	if err := checkOutput(o.Output, "text", "json"); err != nil {
		return err
	}
	store, err := openSweepStore()
	if err != nil {
		return err
	}
	docs, unreadable, err := store.List()
	if err != nil {
		return err
	}
	for _, de := range unreadable {
		// On stderr, so that the JSON on stdout stays a list of
		// documents: the sweep exists, and the user can remove it.
		fmt.Fprintf(o.Stderr, "stratbench: sweeps: left out %s (folder %s): its %s cannot be read (%v); `stratbench prune --sweep %s` removes it\n",
			de.ID, filepath.Dir(de.Path), sweep.DocumentFile, de.Err, de.ID)
	}
	for _, d := range docs {
		d.Status = store.Listed(d)
	}
	return present.WriteSweeps(o.Stdout, docs, o.Output, components.IsTerminal(o.Stdout))
}

// sweepStatus prints sweep id (resolved by shortid.Status): its
// document (json) or its summary.
func sweepStatus(o StatusOptions, store *sweep.Store, id string) error {
	if o.Diff != "" {
		return usage(errors.New("--diff compares jobs, not sweeps"))
	}
	doc, err := store.Load(id)
	if err != nil {
		return asSweepExit(err)
	}
	doc.Status = store.Listed(doc)
	if o.Output == "json" {
		return present.WriteJSON(o.Stdout, doc)
	}
	_, err = io.WriteString(o.Stdout, termtext.Text(sweepSummary(doc, nil)))
	return err
}
