package present

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"stratbench/contract"
	"stratbench/internal/termtext"
	"stratbench/internal/units"
	"stratbench/internal/words"
	"stratbench/job"
)

// WriteReport writes a report as text (ReportText) or as its JSON.
func WriteReport(w io.Writer, rep *job.Report, format string) error {
	if format == "json" {
		return WriteJSON(w, rep)
	}
	_, err := io.WriteString(w, termtext.Text(ReportText(rep)))
	return err
}

// WriteReportLine writes a report as one line of JSON (--ci --watch --output json).
func WriteReportLine(w io.Writer, rep *job.Report) error {
	b, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ReportText is a report as the --ci text output and status show it. It
// reads like the workbench: the status word and the outcome line of its
// header, the failure as its failure pane says it, the hooks' durations
// and the metrics in the units the panes use. The caller makes it safe for
// a terminal.
func ReportText(rep *job.Report) string {
	var b strings.Builder
	word := words.Status(rep.Status)
	fmt.Fprintf(&b, "%s  job %s", words.Badge(word), rep.JobID)
	if rep.FinishedAt != nil {
		fmt.Fprintf(&b, " · took %s", units.Millis(float64(rep.DurationMS)))
	}
	b.WriteString("\n")
	if f := rep.Failure; f != nil {
		writeFailure(&b, f)
	} else if rep.FinishedAt != nil {
		b.WriteString(words.Outcome(rep) + "\n")
	}
	b.WriteString("\n")
	writeInputs(&b, rep)
	b.WriteString("\n")
	writeHooks(&b, rep)
	if rep.Metrics != nil {
		b.WriteString("\n")
		writeMetrics(&b, rep)
		writeSymbols(&b, rep)
	}
	if len(rep.Metadata) > 0 && string(rep.Metadata) != "null" {
		// job.json holds it indented: one line here, as the other fields.
		var compact bytes.Buffer
		if json.Compact(&compact, rep.Metadata) != nil {
			compact.Reset()
			compact.Write(rep.Metadata)
		}
		fmt.Fprintf(&b, "\nmetadata     %s\n", compact.String())
	}
	fmt.Fprintf(&b, "\nfingerprint  %s\norders hash  %s\n", rep.Fingerprint, rep.OrdersHash)
	for _, e := range rep.SaveErrors {
		fmt.Fprintf(&b, "not saved    %s\n", e)
	}
	return b.String()
}

// WatchLine is one run of --ci --watch in text: the status, the job, how
// long it took and its outcome, on one line; status JOB prints the rest.
func WatchLine(rep *job.Report) string {
	line := fmt.Sprintf("%s  job %s · took %s · %s", words.Badge(words.Status(rep.Status)), rep.JobID,
		units.Millis(float64(rep.DurationMS)), words.Outcome(rep))
	if f := rep.Failure; f != nil {
		if ev := words.Event(f); ev != "" {
			line += " (" + ev + ")"
		}
	}
	return line + "\n"
}

// writeFailure writes a failure as the workbench's header line says it,
// with the event: "exception in on_data at event 4 (2026-01-05T00:04:00Z):
// message", then the traceback, indented.
func writeFailure(b *strings.Builder, f *contract.Failure) {
	b.WriteString(words.Where(f))
	if ev := words.Event(f); ev != "" {
		b.WriteString(", " + ev)
	}
	fmt.Fprintf(b, ": %s\n", words.Summary(f))
	if msg := strings.TrimRight(f.Message, "\n"); strings.Contains(msg, "\n") && !words.MessageInTraceback(f) {
		b.WriteString(indent(msg, "  ") + "\n")
	}
	if f.Traceback != "" {
		b.WriteString(indent(strings.TrimRight(f.Traceback, "\n"), "  ") + "\n")
	}
}

// writeInputs writes what the job ran on, and the resources it used.
func writeInputs(b *strings.Builder, rep *job.Report) {
	fmt.Fprintf(b, "strategy     %s (sha256 %s)\n", rep.Strategy.Path, short(rep.Strategy.SHA256))
	if len(rep.Strategy.Params) > 0 {
		fmt.Fprintf(b, "params       %s\n", formatParams(rep.Strategy.Params))
	}
	if sw := rep.Sweep; sw != nil {
		// The run as `jobs --sweep` names it.
		fmt.Fprintf(b, "sweep        %s, run %s (stratbench status %s)\n", sw.ID, sweepRunText(sw), sw.ID)
	}
	fmt.Fprintf(b, "data         %s · %s → %s · %s events · %s\n", rep.Data.Source, rep.Data.From, rep.Data.To,
		units.Count(rep.Data.Events), strings.Join(rep.Data.Symbols, ", "))
	if rep.Data.Window != "" {
		fmt.Fprintf(b, "window       %s\n", words.Window(rep.Data.Window))
	}
	fmt.Fprintf(b, "market       %s\n", words.Market(rep.Market))
	sandbox := "sandbox off"
	if rep.Python.Sandbox {
		sandbox = "sandbox on"
	}
	fmt.Fprintf(b, "python       %s %s · %s\n", rep.Python.Executable, rep.Python.Version, sandbox)
	fmt.Fprintf(b, "memory       peak %s of %s\n", units.Bytes(rep.Resources.PeakMemoryBytes), units.Bytes(rep.Limits.MemoryBytes))
	procs := fmt.Sprintf("peak %s of %s", units.Count(rep.Resources.PeakProcesses), units.Count(rep.Limits.Processes))
	if rep.Limits.Tasks > 0 { // reports of older versions have no task limit
		procs += fmt.Sprintf(" · tasks (threads included) peak %s of %s", units.Count(rep.Resources.PeakTasks), units.Count(rep.Limits.Tasks))
	}
	fmt.Fprintf(b, "processes    %s\n", procs)
	if rep.Resources.TreeTracking != "" {
		fmt.Fprintf(b, "tracking     %s\n", words.Tracking(rep.Resources.TreeTracking))
	}
	logs := units.Bytes(rep.Logs.Bytes)
	if rep.Logs.Truncated {
		logs += fmt.Sprintf(" (output truncated after %s; further output was discarded)", units.Bytes(rep.Limits.LogBytes))
	}
	fmt.Fprintf(b, "logs         %s\n", logs)
	if rep.CommandsDiscarded > 0 {
		fmt.Fprintf(b, "discarded    %s commands of the failed hook\n", units.Count(rep.CommandsDiscarded))
	}
}

// writeHooks writes the hooks' durations as the hooks pane shows them.
func writeHooks(b *strings.Builder, rep *job.Report) {
	limits := map[contract.Hook]float64{
		contract.HookOnData: rep.Limits.OnDataS, contract.HookOnBars: rep.Limits.OnDataS,
		contract.HookOnExecution: rep.Limits.OnExecutionS, contract.HookOnFinish: rep.Limits.OnFinishS,
	}
	_, byTime := rep.Hooks[contract.HookOnBars]
	fmt.Fprintf(b, "%-13s %9s %6s %9s %8s %8s %8s %6s\n", "hook", "calls", "failed", "total", "p50", "p95", "max", "limit")
	for _, h := range contract.Hooks() {
		// The bar hook the strategy has: on_bars when the report has it.
		if h == contract.HookOnBars && !byTime || h == contract.HookOnData && byTime {
			continue
		}
		s := rep.Hooks[h]
		total, p50, p95, maxMS := "—", "—", "—", "—"
		if s.Count > 0 {
			total, p50, p95, maxMS = units.Millis(s.TotalMS), units.Millis(s.P50MS), units.Millis(s.P95MS), units.Millis(s.MaxMS)
		}
		limit := time.Duration(limits[h] * float64(time.Second))
		fmt.Fprintf(b, "%-13s %9s %6s %9s %8s %8s %8s %6s\n", h, units.Count(s.Count), units.Count(s.Failures),
			total, p50, p95, maxMS, limitText(limit))
	}
}

// limitText formats a time limit: whole seconds stay whole ("5s").
func limitText(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int(d/time.Second))
	}
	return units.Duration(d)
}

// writeMetrics writes the metrics in the order and units every printer
// uses (contract.Metrics.List), values aligned. A run that did not pass
// says first what its metrics cover; one in which no event ran has none.
func writeMetrics(b *strings.Builder, rep *job.Report) {
	m := rep.Metrics
	if rep.Status != job.StatusPassed && rep.Status != job.StatusRunning {
		if m.Events == 0 {
			fmt.Fprintf(b, "metrics      none: the run %s before its first event\n", rep.Status)
			return
		}
		fmt.Fprintf(b, "metrics      of the %s events before the run %s (of %s)\n", units.Count(m.Events), rep.Status,
			units.Count(rep.Data.Events))
	}
	list := m.List()
	width := 0
	for _, mt := range list {
		width = max(width, len(mt.Key))
	}
	for _, mt := range list {
		line := fmt.Sprintf("%-*s  %14s", width, mt.Key, mt.Text())
		if mark := words.AnnualMark(m, mt); mark != "" {
			line += " " + mark // a span too short to annualise: the note says so
		}
		b.WriteString(line + "\n")
	}
	if note, _ := words.AnnualNote(m); note != "" {
		fmt.Fprintf(b, "\nannualised   %s\n", note)
	}
}

// formatParams writes params as "fast=10 slow=30", by name.
func formatParams(p map[string]any) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, p[k])
	}
	return strings.Join(parts, " ")
}

func WriteJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// short is the first 12 characters of a hash, or "-" for none.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "-"
	}
	return h
}

// clip cuts s to n characters, marking the cut with "…".
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// sweepRunText is which run of its sweep a job is, as the sweep's text
// output numbers it: "#3", or "fold 1 train #3" in a walk-forward.
func sweepRunText(t *job.SweepTag) string {
	if t.Fold != nil {
		return fmt.Sprintf("fold %d %s #%d", *t.Fold, t.Phase, t.Index)
	}
	return fmt.Sprintf("#%d", t.Index)
}
