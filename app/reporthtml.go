package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"stratbench/internal/atomicfile"
	"stratbench/job"
	"stratbench/sweep"
	"stratbench/tearsheet"
)

// ReportFileName is the HTML report's name in a job's or a sweep's folder.
const ReportFileName = "report.html"

// ReportInJobFolder is the value of --report given without a path: the
// report goes to report.html in the job's folder.
const ReportInJobFolder = "(job folder)"

// ReportOptions are the options of `stratbench report`.
type ReportOptions struct {
	ID   string // a job or a sweep, in any short form
	Out  string // where to write it; "" for report.html in its folder
	Open bool   // hand the file to $BROWSER or xdg-open
	Streams
}

// Report writes the HTML report of a job, a sweep or a walk-forward
// (docs/report.md) and prints its path.
func Report(ctx context.Context, o ReportOptions) error {
	id, jobs, sweeps, isSweep, err := statusTarget(StatusOptions{ID: o.ID, Streams: o.Streams})
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
	var (
		buf  bytes.Buffer
		dir  string
		opts = tearsheet.Options{Version: Version}
	)
	if isSweep {
		s, err := tearsheet.LoadSweep(ctx, sweeps, jobs, id)
		if err != nil {
			return reportLoadError(err)
		}
		dir = sweeps.Dir(id)
		err = tearsheet.WriteSweep(&buf, s, opts)
		if err != nil {
			return err
		}
	} else {
		j, err := tearsheet.LoadJob(ctx, jobs, id)
		if err != nil {
			return reportLoadError(err)
		}
		dir = jobs.JobDir(id)
		if err := tearsheet.WriteJob(&buf, j, opts); err != nil {
			return err
		}
	}
	path := o.Out
	if path == "" {
		path = filepath.Join(dir, ReportFileName)
	}
	if err := atomicfile.WriteFile(path, buf.Bytes(), 0o644, atomicfile.Durable); err != nil {
		return err
	}
	fmt.Fprintln(o.Stdout, path)
	if o.Open {
		return openInBrowser(path)
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

// writeJobReport writes the HTML report of a job that just ran (--ci
// --report) to path, or to report.html in its folder, and returns where.
func writeJobReport(ctx context.Context, store *job.Store, jobID, path string) (string, error) {
	j, err := tearsheet.LoadJob(ctx, store, jobID)
	if err != nil {
		return "", err
	}
	if path == "" || path == ReportInJobFolder {
		path = filepath.Join(store.JobDir(jobID), ReportFileName)
	}
	var buf bytes.Buffer
	if err := tearsheet.WriteJob(&buf, j, tearsheet.Options{Version: Version}); err != nil {
		return "", err
	}
	return path, atomicfile.WriteFile(path, buf.Bytes(), 0o644, atomicfile.Durable)
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

// openInBrowser hands path to the first program of $BROWSER (a list
// separated by colons) that can be started, else to xdg-open; never
// through a shell. The program is left running.
func openInBrowser(path string) error {
	var tried []string
	candidates := append(strings.Split(os.Getenv("BROWSER"), ":"), "xdg-open")
	for _, c := range candidates {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		cmd := exec.Command(c, path)
		if err := cmd.Start(); err != nil {
			tried = append(tried, c)
			continue
		}
		return cmd.Process.Release()
	}
	return fmt.Errorf("open %s: no browser could be started (tried %s); set $BROWSER", path, strings.Join(tried, ", "))
}
