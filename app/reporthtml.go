package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"stratbench/internal/atomicfile"
	"stratbench/job"
	"stratbench/sweep"
	"stratbench/tearsheet"
)

// ReportInJobFolder is the value of --report given without a path: the
// report goes to report.html in the job's folder.
const ReportInJobFolder = "(job folder)"

// ReportToStdout is the value of --out that writes the report to the
// standard output.
const ReportToStdout = "-"

// ReportOptions are the options of `stratbench report`.
type ReportOptions struct {
	ID   string // a job or a sweep, in any short form
	Out  string // where to write it; "" for report.html in its folder, "-" for stdout
	Open bool   // hand the file to $BROWSER or xdg-open
	Streams
}

// Report writes the HTML report of a job, a sweep or a walk-forward
// (docs/report.md) and prints its path, or writes it to stdout.
func Report(ctx context.Context, o ReportOptions) error {
	if o.Out == ReportToStdout && o.Open {
		return usage(errors.New("--open opens a file: it does not go with --out - (the report on standard output)"))
	}
	if o.Out != "" && o.Out != ReportToStdout {
		if err := checkReportPath("--out", o.Out); err != nil {
			return err
		}
	}
	id, jobs, sweeps, isSweep, err := statusTarget(o.ID, o.Stderr)
	if err != nil {
		return err
	}
	if jobs == nil {
		home, err := job.DefaultHome()
		if err != nil {
			return err
		}
		jobs = job.ReadStore(home)
	}
	var w io.Writer
	if o.Out == ReportToStdout {
		w = o.Stdout
	}
	t := tearsheet.Target{Jobs: jobs, Sweeps: sweeps, ID: id, Sweep: isSweep}
	path, err := tearsheet.Write(ctx, t, o.Out, w, tearsheet.Options{Version: Version})
	if err != nil || w != nil {
		return reportLoadError(err)
	}
	fmt.Fprintln(o.Stdout, path)
	if o.Open {
		return tearsheet.OpenInBrowser(path)
	}
	return nil
}

// checkReportPath refuses a report path a user named (flag) that is not a
// regular file or a new name in a folder that can take it: a link (as
// /dev/stdout is), a FIFO, a device or a folder would be replaced by the
// rename that writes the report.
func checkReportPath(flag, path string) error {
	err := atomicfile.CheckTarget(path)
	if errors.Is(err, atomicfile.ErrNotRegular) {
		return usage(fmt.Errorf("%s: %w: the report replaces only a regular file (--out - writes it to standard output)", flag, err))
	}
	if err != nil {
		return usage(fmt.Errorf("%s: %w", flag, err))
	}
	return nil
}

// reportLoadError maps what could not be read: an unknown or unreadable
// job or sweep is bad input.
func reportLoadError(err error) error {
	var de *sweep.DocumentError
	if errors.Is(err, job.ErrUnknownJob) || errors.Is(err, sweep.ErrUnknownSweep) || errors.As(err, &de) {
		return usage(err)
	}
	return err
}

// writeJobReport writes the HTML report of a job (--ci --report, the
// workbench's o) to path, or to report.html in its folder
// (tearsheet.SaveJob), and returns where.
func writeJobReport(ctx context.Context, store *job.Store, jobID, path string) (string, error) {
	if path == ReportInJobFolder {
		path = ""
	}
	return tearsheet.SaveJob(ctx, store, jobID, path, tearsheet.Options{Version: Version})
}

// writeSweepReport writes the HTML report of sweep id to report.html in
// its folder (the sweep view's o) and returns where.
func writeSweepReport(ctx context.Context, sweeps *sweep.Store, jobs *job.Store, id string) (string, error) {
	return tearsheet.SaveSweep(ctx, sweeps, jobs, id, tearsheet.Options{Version: Version})
}

// checkCIReport checks the path of --ci --report=PATH before the run: a
// folder that cannot take it, or a path that is not a regular file, is
// bad input now rather than an error after the whole run.
func checkCIReport(path string) error {
	switch path {
	case "", ReportInJobFolder:
		return nil
	case ReportToStdout:
		return usage(errors.New("--report=-: the standard output has the run's report; write the HTML one to a file (or run stratbench report ID --out - after the run)"))
	}
	return checkReportPath("--report", path)
}

// SplitReportArg finds the path of `--report PATH` among the positional
// arguments: a flag whose value is optional takes it only as
// --report=PATH, so `--ci --report out.html s.py` leaves out.html
// among them. With report given without a value and two arguments, the
// one that names an .html file is the report's path.
func SplitReportArg(args []string, report string) ([]string, string) {
	if report != ReportInJobFolder || len(args) != 2 {
		return args, report
	}
	for i, a := range args {
		ext := strings.ToLower(filepath.Ext(a))
		if ext == ".html" || ext == ".htm" {
			return []string{args[1-i]}, a
		}
	}
	return args, report
}
