// Package headless is stratbench's plain-text face: the --ci printer (progress
// on a terminal's stderr, then the report), and the output of the jobs,
// status and logs commands. It consumes the same job event stream as the
// TUI and never draws anything but text.
package headless

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"stratbench/contract"
	"stratbench/engine"
	"stratbench/internal/termtext"
	"stratbench/internal/units"
)

// Follow consumes a job's events until the stream ends. When progress is not
// nil (stderr is a terminal), it keeps one line there up to date with bars
// done, bars/s and ETA, and clears it at the end.
func Follow(events <-chan engine.Event, progress io.Writer) {
	var last time.Time
	shown := false
	for e := range events {
		p, ok := e.(engine.Progress)
		if !ok || progress == nil {
			continue
		}
		if now := time.Now(); now.Sub(last) >= 200*time.Millisecond {
			last = now
			fmt.Fprintf(progress, "\r\033[K%s", progressLine(p))
			shown = true
		}
	}
	if shown {
		fmt.Fprint(progress, "\r\033[K")
	}
}

func progressLine(p engine.Progress) string {
	s := fmt.Sprintf("running: %s/%s bars", units.Count(p.Done), units.Count(p.Total))
	if p.Total > 0 {
		s += fmt.Sprintf(" (%.0f%%)", 100*float64(p.Done)/float64(p.Total))
	}
	if p.BarsPerSec > 0 {
		s += fmt.Sprintf(" · %s bars/s", units.Count(int(p.BarsPerSec)))
	}
	if p.ETA > 0 {
		s += " · ETA " + p.ETA.Round(time.Second).String()
	}
	return s
}

// WriteReport writes a report as text or as the DESIGN §5 JSON.
func WriteReport(w io.Writer, rep *engine.Report, format string) error {
	if format == "json" {
		return writeJSON(w, rep)
	}
	var b strings.Builder
	status := strings.ToUpper(string(rep.Status))
	fmt.Fprintf(&b, "job %s  %s", rep.JobID, status)
	if rep.FinishedAt != nil {
		fmt.Fprintf(&b, " in %s", (time.Duration(rep.DurationMS) * time.Millisecond).String())
	}
	b.WriteString("\n")
	if f := rep.Failure; f != nil {
		fmt.Fprintf(&b, "\n%s in %s", f.Kind, f.Hook)
		if f.EventIndex != nil {
			fmt.Fprintf(&b, " at event %d", *f.EventIndex)
			if f.EventTime != nil {
				fmt.Fprintf(&b, " (%s)", *f.EventTime)
			}
		}
		fmt.Fprintf(&b, ": %s\n", f.Message)
		if f.Traceback != "" {
			b.WriteString(indent(strings.TrimRight(f.Traceback, "\n"), "  ") + "\n")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "strategy     %s (sha256 %s)\n", rep.Strategy.Path, short(rep.Strategy.SHA256))
	if len(rep.Strategy.Params) > 0 {
		fmt.Fprintf(&b, "params       %s\n", formatParams(rep.Strategy.Params))
	}
	fmt.Fprintf(&b, "data         %s · %s → %s · %s events · %s\n", rep.Data.Source, rep.Data.From, rep.Data.To,
		units.Count(rep.Data.Events), strings.Join(rep.Data.Symbols, ", "))
	sandbox := "off"
	if rep.Python.Sandbox {
		sandbox = "on"
	}
	fmt.Fprintf(&b, "python       %s %s · sandbox %s\n", rep.Python.Executable, rep.Python.Version, sandbox)
	fmt.Fprintf(&b, "resources    peak memory %s of %s · peak processes %d of %d\n",
		units.Bytes(rep.Resources.PeakMemoryBytes), units.Bytes(rep.Limits.MemoryBytes), rep.Resources.PeakProcesses, rep.Limits.Processes)
	logs := units.Bytes(rep.Logs.Bytes)
	if rep.Logs.Truncated {
		logs += fmt.Sprintf(" (truncated at %s)", units.Bytes(rep.Limits.LogBytes))
	}
	fmt.Fprintf(&b, "logs         %s\n", logs)
	if rep.CommandsDiscarded > 0 {
		fmt.Fprintf(&b, "discarded    %d commands of the failed hook\n", rep.CommandsDiscarded)
	}
	b.WriteString("\n")
	writeHooks(&b, rep)
	if m := metricsOf(rep); len(m) > 0 {
		b.WriteString("\n")
		writeMetrics(&b, m)
	}
	if len(rep.Metadata) > 0 && string(rep.Metadata) != "null" {
		fmt.Fprintf(&b, "\nmetadata     %s\n", rep.Metadata)
	}
	fmt.Fprintf(&b, "\nfingerprint  %s\norders hash  %s\n", rep.Fingerprint, rep.OrdersHash)
	_, err := io.WriteString(w, termtext.Text(b.String()))
	return err
}

func writeHooks(b *strings.Builder, rep *engine.Report) {
	limits := map[contract.Hook]float64{
		contract.HookOnData: rep.Limits.OnDataS, contract.HookOnExecution: rep.Limits.OnExecutionS, contract.HookOnFinish: rep.Limits.OnFinishS,
	}
	fmt.Fprintf(b, "%-13s %9s %5s %11s %9s %9s %9s %7s\n", "hook", "calls", "fail", "total ms", "p50 ms", "p95 ms", "max ms", "limit")
	for _, h := range contract.Hooks() {
		s := rep.Hooks[h]
		fmt.Fprintf(b, "%-13s %9s %5d %11.1f %9.3f %9.3f %9.3f %6gs\n", h, units.Count(s.Count), s.Failures, s.TotalMS, s.P50MS, s.P95MS, s.MaxMS, limits[h])
	}
}

// metricKeys are shown first, in this order: DESIGN §5's set.
var metricKeys = []string{"start_equity", "final_equity", "total_return", "sharpe", "max_drawdown", "fills", "trades", "win_rate", "fees"}

func metricsOf(rep *engine.Report) map[string]any {
	var m map[string]any
	b, err := json.Marshal(rep.Metrics)
	if rep.Metrics == nil || err != nil || json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

func writeMetrics(b *strings.Builder, m map[string]any) {
	keys := orderedKeys(m)
	width := 0
	for _, k := range keys {
		width = max(width, len(k))
	}
	for _, k := range keys {
		fmt.Fprintf(b, "%-*s  %s\n", width, k, formatValue(m[k]))
	}
}

func orderedKeys(m map[string]any) []string {
	var keys []string
	seen := map[string]bool{}
	for _, k := range metricKeys {
		if _, ok := m[k]; ok {
			keys = append(keys, k)
			seen[k] = true
		}
	}
	var rest []string
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(keys, rest...)
}

func formatValue(v any) string {
	switch v := v.(type) {
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return fmt.Sprintf("%.0f", v)
		}
		return fmt.Sprintf("%.6g", v)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + formatValue(v[k])
		}
		return strings.Join(parts, " ")
	case nil:
		return "-"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

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

// WriteReportLine writes a report as one line of JSON (--ci --watch --output json).
func WriteReportLine(w io.Writer, rep *engine.Report) error {
	b, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteJobs writes the job list, newest first, as a table or as JSON.
func WriteJobs(w io.Writer, reports []*engine.Report, format string) error {
	if format == "json" {
		return writeJSON(w, reports)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-26s %-8s %-24s %-20s %9s %9s  %s\n", "JOB", "STATUS", "STRATEGY", "STARTED", "DURATION", "RETURN", "FAILURE")
	for _, r := range reports {
		dur, ret, fail := "-", "-", ""
		if r.FinishedAt != nil {
			dur = (time.Duration(r.DurationMS) * time.Millisecond).Round(time.Millisecond).String()
		}
		if m := metricsOf(r); m != nil {
			if v, ok := m["total_return"].(float64); ok {
				ret = fmt.Sprintf("%+.2f%%", 100*v)
			}
		}
		if r.Failure != nil {
			fail = string(r.Failure.Kind) + " in " + string(r.Failure.Hook)
		}
		fmt.Fprintf(&b, "%-26s %-8s %-24s %-20s %9s %9s  %s\n", r.JobID, r.Status, clip(baseName(r.Strategy.Path), 24),
			r.StartedAt.Local().Format("2006-01-02 15:04:05"), dur, ret, fail)
	}
	_, err := io.WriteString(w, termtext.Text(b.String()))
	return err
}

// WriteLogLine writes one log line as text ("15:04:05.000 stdout  text") or as JSON Lines.
func WriteLogLine(w io.Writer, l engine.LogLine, format string) error {
	if format == "jsonl" {
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	_, err := fmt.Fprintf(w, "%s %-6s %s\n", l.Time.Local().Format("15:04:05.000"), l.Stream, termtext.Line(l.Line))
	return err
}

// WriteDiff writes what differs between two jobs: inputs (fingerprint
// parts), status and failure, metrics and hashes.
func WriteDiff(w io.Writer, a, b *engine.Report) error {
	var out strings.Builder
	fmt.Fprintf(&out, "%-22s %-32s %-32s\n", "", a.JobID, b.JobID)
	row := func(name, x, y string) {
		mark := " "
		if x != y {
			mark = "≠"
		}
		fmt.Fprintf(&out, "%s %-20s %-32s %-32s\n", mark, name, clip(x, 32), clip(y, 32))
	}
	row("status", string(a.Status), string(b.Status))
	row("failure", failureText(a.Failure), failureText(b.Failure))
	row("strategy sha256", short(a.Strategy.SHA256), short(b.Strategy.SHA256))
	row("params", formatParams(a.Strategy.Params), formatParams(b.Strategy.Params))
	row("data", a.Data.Source, b.Data.Source)
	row("window", a.Data.From+" → "+a.Data.To, b.Data.From+" → "+b.Data.To)
	row("events", units.Count(a.Data.Events), units.Count(b.Data.Events))
	row("python", a.Python.Version, b.Python.Version)
	row("fingerprint", short(a.Fingerprint), short(b.Fingerprint))
	row("orders hash", short(a.OrdersHash), short(b.OrdersHash))
	ma, mb := metricsOf(a), metricsOf(b)
	union := map[string]any{}
	for k, v := range ma {
		union[k] = v
	}
	for k, v := range mb {
		union[k] = v
	}
	for _, k := range orderedKeys(union) {
		row(k, valueOrDash(ma, k), valueOrDash(mb, k))
	}
	if a.Fingerprint == b.Fingerprint && a.OrdersHash == b.OrdersHash {
		out.WriteString("\nsame inputs, same orders and fills\n")
	} else if a.Fingerprint == b.Fingerprint {
		out.WriteString("\nsame inputs, different orders or fills: the strategy is not deterministic\n")
	}
	_, err := io.WriteString(w, termtext.Text(out.String()))
	return err
}

func valueOrDash(m map[string]any, k string) string {
	if v, ok := m[k]; ok {
		return formatValue(v)
	}
	return "-"
}

func failureText(f *contract.Failure) string {
	if f == nil {
		return "-"
	}
	return string(f.Kind) + " in " + string(f.Hook)
}

func writeJSON(w io.Writer, v any) error {
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

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "-"
	}
	return h
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func baseName(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// WritePrecheck writes a precheck's verdict, then the run's report, as text
// or as JSON.
func WritePrecheck(w io.Writer, res engine.PrecheckResult, format string) error {
	if format == "json" {
		return writeJSON(w, res)
	}
	switch res.Status {
	case engine.PrecheckAlready:
		r := res.Record
		_, err := fmt.Fprintf(w, "already checked: this script and params passed precheck %s → %s on %s (job %s, stratbench %s)\n",
			r.From, r.To, r.PassedAt.Local().Format("2006-01-02 15:04"), r.JobID, r.Version)
		return err
	case engine.PrecheckPassed:
		fmt.Fprintf(w, "precheck passed: recorded for this script, params %q and stratbench %s\n\n", res.Record.Params, res.Record.Version)
	case engine.PrecheckStopped:
		fmt.Fprint(w, "precheck stopped before the end: nothing recorded\n\n")
	default:
		fmt.Fprint(w, "precheck failed\n\n")
	}
	return WriteReport(w, res.Report, "text")
}
