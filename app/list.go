package app

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"stratbench/internal/termtext"
	"stratbench/internal/units"
	"stratbench/internal/words"
	"stratbench/job"
)

// writeJobs writes the job list, newest first, as a table with the
// columns of the workbench's jobs pane, or as JSON. A list with sweep runs
// (jobs --sweep, --all) adds which run each is and its swept params.
func writeJobs(w io.Writer, reports []*job.Report, format string, loc *time.Location) error {
	if format == "json" {
		return writeJSON(w, reports)
	}
	_, err := io.WriteString(w, termtext.Text(jobsText(reports, loc, sweptParams(reports))))
	return err
}

// paramsWidth is the most runes the PARAMS column of jobsText takes; longer
// params are cut there, as `status JOB` shows them all.
const paramsWidth = 36

// jobsText is the job list as a table. swept names, per sweep id, the
// params its runs vary: the PARAMS column shows those, in grid order; a
// sweep missing from it (its folder pruned) shows every param, by name.
func jobsText(reports []*job.Report, loc *time.Location, swept map[string][]string) string {
	runs, params := make([]string, len(reports)), make([]string, len(reports))
	runW, paramsW := 0, 0
	for i, r := range reports {
		if r.Sweep == nil {
			continue
		}
		runs[i] = sweepRunText(r.Sweep)
		params[i] = clip(compactParams(r.Strategy.Params, swept[r.Sweep.ID]), paramsWidth)
		runW = max(runW, utf8.RuneCountInString(runs[i]), len("RUN"))
		paramsW = max(paramsW, utf8.RuneCountInString(params[i]), len("PARAMS"))
	}
	row := func(id, status, strategy, started, dur, ret, run, params, failure string) string {
		line := fmt.Sprintf("%-26s %-10s %-24s %-16s %9s %9s  ", id, status, strategy, started, dur, ret)
		if runW > 0 {
			// Only a list with sweep runs has these columns.
			line += padRight(run, runW) + "  " + padRight(params, paramsW) + "  "
		}
		return line + failure + "\n"
	}
	out := row("JOB", "STATUS", "STRATEGY", "STARTED", "DURATION", "RETURN", "RUN", "PARAMS", "FAILURE")
	for i, r := range reports {
		dur, ret, fail := "—", "—", ""
		if r.FinishedAt != nil {
			dur = units.Millis(float64(r.DurationMS))
		}
		if r.Metrics != nil && (r.Status == job.StatusPassed || r.Metrics.Events > 0) {
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
		run, ps := runs[i], params[i]
		if r.Sweep == nil {
			run, ps = "—", "—"
		}
		out += row(r.JobID, words.JobStatus(r.Status), clip(filepath.Base(r.Strategy.Path), 24), started, dur, ret, run, ps, fail)
	}
	return out
}

// sweepRunText is which run of its sweep a job is, as the sweep's text
// output numbers it: "#3", or "fold 1 train #3" in a walk-forward.
func sweepRunText(t *job.SweepTag) string {
	if t.Fold != nil {
		return fmt.Sprintf("fold %d %s #%d", *t.Fold, t.Phase, t.Index)
	}
	return fmt.Sprintf("#%d", t.Index)
}

// compactParams writes params as "k=v k=v": the names in names (in that
// order) when there are any, else every param by name.
func compactParams(params map[string]any, names []string) string {
	if len(names) == 0 {
		names = slices.Sorted(maps.Keys(params))
	}
	parts := make([]string, 0, len(names))
	for _, n := range names {
		if v, ok := params[n]; ok {
			parts = append(parts, fmt.Sprintf("%s=%v", n, v))
		}
	}
	return strings.Join(parts, " ")
}

// writeLogLine writes one log line as text ("15:04:05.000 stdout text", in
// loc) or as JSON Lines.
func writeLogLine(w io.Writer, l job.LogLine, format string, loc *time.Location) error {
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
