package present

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"stratbench/internal/termtext"
	"stratbench/internal/units"
	"stratbench/internal/words"
	"stratbench/job"
	"strings"
	"time"
	"unicode/utf8"
)

// WriteJobs writes the job list, newest first, as a table with the
// columns of the workbench's jobs pane, or as JSON. A list with sweep runs
// (jobs --sweep, --all) adds which run each is and its swept params
// (swept, as jobsText takes it; called for the text only). The JSON is
// each listed job's whole report, load(id) giving it one at a time (the
// listing keeps only what the table shows).
func WriteJobs(w io.Writer, reports []*job.Report, format string, loc *time.Location, swept func() map[string][]string,
	load func(id string) (*job.Report, error)) error {
	if format == "json" {
		return writeReportsJSON(w, load, reports)
	}
	_, err := io.WriteString(w, termtext.Text(jobsText(reports, loc, swept())))
	return err
}

// writeReportsJSON writes the whole reports of the listed jobs as one
// JSON array, as writeJSON would: each loaded, written and let go in turn
// (a listing holds only what it shows, and a report may take 32 MiB). A
// job removed since it was listed is left out.
func writeReportsJSON(w io.Writer, load func(id string) (*job.Report, error), listed []*job.Report) error {
	if len(listed) == 0 {
		_, err := io.WriteString(w, "[]\n")
		return err
	}
	sep := "[\n  "
	for _, l := range listed {
		r, err := load(l.JobID)
		if err != nil {
			continue
		}
		if _, err := io.WriteString(w, sep); err != nil {
			return err
		}
		// Encoded straight to w, as MarshalIndent would with this
		// prefix, without its copy of the report's JSON.
		enc := json.NewEncoder(noFinalNewline{w})
		enc.SetIndent("  ", "  ")
		if err := enc.Encode(r); err != nil {
			return err
		}
		sep = ",\n  "
	}
	if sep == "[\n  " {
		_, err := io.WriteString(w, "[]\n")
		return err
	}
	_, err := io.WriteString(w, "\n]\n")
	return err
}

// noFinalNewline writes to w what is written to it but the newline that
// ends it (json.Encoder ends each value with one).
type noFinalNewline struct{ w io.Writer }

func (n noFinalNewline) Write(p []byte) (int, error) {
	_, err := n.w.Write(bytes.TrimSuffix(p, []byte("\n")))
	return len(p), err
}

// paramsWidth is the most runes the PARAMS column of jobsText takes;
// longer params are cut there (the params that tell the listed jobs apart
// come first), as `status JOB` shows them all.
const paramsWidth = 48

// strategyWidth is the most runes the STRATEGY column takes: a name with
// folders (words.StrategyNames) keeps its end, the file's name.
const strategyWidth = 28

// jobsText is the job list as a table. Each job's params are in the
// PARAMS column, those whose values differ between the listed jobs first
// (words.ParamOrder); a STRATEGY name that several folders have shows its
// folder. swept names, per sweep id, the params its runs vary: a sweep
// run shows those first, in grid order. A list with sweep runs adds which
// run each is.
func jobsText(reports []*job.Report, loc *time.Location, swept map[string][]string) string {
	runs, params := make([]string, len(reports)), make([]string, len(reports))
	paths, all := make([]string, len(reports)), make([]map[string]any, len(reports))
	for i, r := range reports {
		paths[i], all[i] = r.Strategy.Path, r.Strategy.Params
	}
	names := words.StrategyNames(paths)
	order := words.ParamOrder(all)
	runW, paramsW, strategyW := 0, 0, len("STRATEGY")
	for i, r := range reports {
		names[i] = clipLeft(names[i], strategyWidth)
		strategyW = max(strategyW, utf8.RuneCountInString(names[i]))
		first := order
		if r.Sweep != nil {
			runs[i] = sweepRunText(r.Sweep)
			runW = max(runW, utf8.RuneCountInString(runs[i]), len("RUN"))
			first = append(slices.Clone(swept[r.Sweep.ID]), order...)
		}
		params[i] = clip(words.Params(r.Strategy.Params, first), paramsWidth)
		if params[i] != "" {
			paramsW = max(paramsW, utf8.RuneCountInString(params[i]), len("PARAMS"))
		}
	}
	row := func(id, status, strategy, started, dur, ret, run, params, failure string) string {
		line := fmt.Sprintf("%-26s %-10s %s %-16s %9s %9s  ", id, status, padRight(strategy, strategyW), started, dur, ret)
		if runW > 0 {
			// Only a list with sweep runs has this column.
			line += padRight(run, runW) + "  "
		}
		if paramsW > 0 {
			// Only a list with params has this one.
			line += padRight(params, paramsW) + "  "
		}
		return strings.TrimRight(line+failure, " ") + "\n"
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
			run = "—"
		}
		if ps == "" {
			ps = "—"
		}
		out += row(r.JobID, words.JobStatus(r.Status), names[i], started, dur, ret, run, ps, fail)
	}
	return out
}

// clipLeft cuts s to n characters from its start, marking the cut with
// "…": the end of a path, its file's name, stays.
func clipLeft(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

// WriteLogLine writes one log line as text ("15:04:05.000 stdout text", in
// loc) or as JSON Lines.
func WriteLogLine(w io.Writer, l job.LogLine, format string, loc *time.Location) error {
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

// WriteJobsLeftOut ends the text of a job list with what it left out: the
// older jobs beyond its limit, and the runs of sweeps that the default
// listing hides (a home with only sweep runs would otherwise list
// nothing, without a word why).
func WriteJobsLeftOut(w io.Writer, older, sweepRuns int) error {
	if older > 0 {
		noun := "jobs"
		if older == 1 {
			noun = "job"
		}
		if _, err := fmt.Fprintf(w, "… %s older %s not shown (--limit 0 lists all)\n", units.Count(older), noun); err != nil {
			return err
		}
	}
	if sweepRuns > 0 {
		_, err := fmt.Fprintf(w, "… %s of sweeps not shown (--all lists them too, --sweep ID one sweep's; stratbench sweeps lists the sweeps)\n",
			Counted(sweepRuns, "run", "runs"))
		return err
	}
	return nil
}
