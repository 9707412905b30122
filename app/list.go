package app

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"stratbench/engine"
	"stratbench/internal/termtext"
	"stratbench/internal/units"
	"stratbench/internal/words"
)

// writeJobs writes the job list, newest first, as a table with the
// columns of the workbench's jobs pane, or as JSON.
func writeJobs(w io.Writer, reports []*engine.Report, format string, loc *time.Location) error {
	if format == "json" {
		return writeJSON(w, reports)
	}
	_, err := io.WriteString(w, termtext.Text(jobsText(reports, loc)))
	return err
}

func jobsText(reports []*engine.Report, loc *time.Location) string {
	row := func(id, status, strategy, started, dur, ret, failure string) string {
		return fmt.Sprintf("%-26s %-10s %-24s %-16s %9s %9s  %s\n", id, status, strategy, started, dur, ret, failure)
	}
	out := row("JOB", "STATUS", "STRATEGY", "STARTED", "DURATION", "RETURN", "FAILURE")
	for _, r := range reports {
		dur, ret, fail := "—", "—", ""
		if r.FinishedAt != nil {
			dur = units.Millis(float64(r.DurationMS))
		}
		if r.Metrics != nil && (r.Status == engine.StatusPassed || r.Metrics.Events > 0) {
			// A run that ended before its first event has no return.
			ret = units.Percent(r.Metrics.TotalReturn)
		}
		if r.Failure != nil {
			fail = words.Where(r.Failure)
		}
		started := "—"
		if !r.StartedAt.IsZero() {
			started = r.StartedAt.In(loc).Format("2006-01-02 15:04")
		}
		out += row(r.JobID, words.JobStatus(r.Status), clip(filepath.Base(r.Strategy.Path), 24), started, dur, ret, fail)
	}
	return out
}

// writeLogLine writes one log line as text ("15:04:05.000 stdout text", in
// loc) or as JSON Lines.
func writeLogLine(w io.Writer, l engine.LogLine, format string, loc *time.Location) error {
	if format == "jsonl" {
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	_, err := fmt.Fprintf(w, "%s %-6s %s\n", l.Time.In(loc).Format("15:04:05.000"), l.Stream, termtext.Line(l.Line))
	return err
}
