// Package words holds the words the workbench and the text outputs share,
// so that a job reads the same on the screen and in a terminal log: the
// status words, the failure kinds' headlines, where a failure happened and
// what a tree tracking means.
package words

import (
	"fmt"
	"strings"

	"stratbench/contract"
	"stratbench/internal/units"
	"stratbench/job"
)

// Status is a job status in capitals, as the workbench's header shows it:
// "PASSED", "FAILED", "STOPPED", "RUNNING"; "UNKNOWN" for anything else.
func Status(s job.Status) string {
	switch s {
	case job.StatusPassed:
		return "PASSED"
	case job.StatusFailed:
		return "FAILED"
	case job.StatusStopped:
		return "STOPPED"
	case job.StatusRunning:
		return "RUNNING"
	}
	return "UNKNOWN"
}

// Glyph is the symbol that carries a status word without colour.
func Glyph(word string) string {
	switch word {
	case "PASSED":
		return "✓"
	case "FAILED", "ERROR":
		return "✗"
	case "STOPPED", "STOPPING":
		return "■"
	case "RUNNING", "STARTING":
		return "●"
	}
	return "○"
}

// Badge is a status word with its glyph: "✓ PASSED".
func Badge(word string) string { return Glyph(word) + " " + word }

// JobStatus is a status in lower case with its glyph, as the jobs list
// shows it: "✓ passed". A status that is none of the known ones is shown as
// it is (the caller makes it safe to print).
func JobStatus(s job.Status) string {
	switch s {
	case job.StatusPassed:
		return "✓ passed"
	case job.StatusFailed:
		return "✗ failed"
	case job.StatusStopped:
		return "⚠ stopped"
	case job.StatusRunning:
		return "● running"
	}
	return string(s)
}

// Kind is the headline of a failure kind: "TIMEOUT", "MEMORY LIMIT".
func Kind(kind contract.FailureKind) string {
	switch kind {
	case contract.KindTimeout:
		return "TIMEOUT"
	case contract.KindMemory:
		return "MEMORY LIMIT"
	case contract.KindProcesses:
		return "PROCESS LIMIT"
	case contract.KindProtocol:
		return "PROTOCOL VIOLATION"
	case contract.KindException:
		return "EXCEPTION"
	case contract.KindCrash:
		return "CRASH"
	}
	return strings.ToUpper(string(kind))
}

// Where is a failure's kind and hook: "exception in on_data". A limit found
// by sampling the process tree (memory, processes) is found after the fact:
// it says so, "processes limit detected during on_data".
func Where(f *contract.Failure) string {
	if Sampled(f.Kind) {
		return string(f.Kind) + " limit detected during " + string(f.Hook)
	}
	return string(f.Kind) + " in " + string(f.Hook)
}

// Headline is a failure's kind and hook as the failure pane's first line
// says it: "EXCEPTION in on_data", "PROCESS LIMIT detected during on_data".
func Headline(f *contract.Failure) string {
	if Sampled(f.Kind) {
		return Kind(f.Kind) + " detected during " + string(f.Hook)
	}
	return Kind(f.Kind) + " in " + string(f.Hook)
}

// Sampled reports whether failures of kind are found by sampling the tree,
// after the fact, rather than where they happen.
func Sampled(kind contract.FailureKind) bool {
	return kind == contract.KindMemory || kind == contract.KindProcesses
}

// Summary is the one line of a failure's message that says most: its first
// line, or for a message that starts with the place ('File "…", line 27',
// as a syntax error's does) its last line, the error itself.
func Summary(f *contract.Failure) string {
	msg := strings.TrimRight(f.Message, "\n")
	first, rest, multi := strings.Cut(msg, "\n")
	if !multi || !strings.HasPrefix(strings.TrimSpace(first), `File "`) {
		return first
	}
	lines := strings.Split(rest, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return first
}

// MessageInTraceback reports whether the traceback already says the whole
// message (Python's tracebacks end with it), so that a printer writes it
// once.
func MessageInTraceback(f *contract.Failure) bool {
	msg := strings.TrimSpace(f.Message)
	if msg == "" || f.Traceback == "" {
		return msg == ""
	}
	squash := func(s string) string {
		var b strings.Builder
		for _, l := range strings.Split(s, "\n") {
			b.WriteString(strings.TrimSpace(l))
			b.WriteByte('\n')
		}
		return b.String()
	}
	return strings.Contains(squash(f.Traceback), squash(msg))
}

// Event says which event a failure happened at: "event #1,031 at
// 2026-11-28T12:00:00Z", or "" when no event was being handled.
func Event(f *contract.Failure) string {
	if f.EventIndex == nil {
		return ""
	}
	s := "event #" + units.Count(*f.EventIndex)
	if f.EventTime != nil {
		s += " at " + *f.EventTime
	}
	return s
}

// Tracking says what a tree tracking means: "pidns · the tree is a PID
// namespace of its own".
func Tracking(tracking string) string {
	switch tracking {
	case "pidns":
		return "pidns · the tree is a PID namespace of its own"
	case "fallback":
		return "fallback · PID namespaces refused here: a subreaper holds the tree"
	}
	return tracking
}

// Outcome is the line that sums up a finished job, as the workbench's
// header shows it: "passed: 20,160 events · return 21.18 % · sharpe 1.23 ·
// trades 7", "exception in on_data: ZeroDivisionError: division by zero",
// "stopped after 1.20s". Its first line only; the caller makes it safe.
func Outcome(r *job.Report) string {
	took := units.Millis(float64(r.DurationMS))
	switch r.Status {
	case job.StatusFailed:
		if f := r.Failure; f != nil {
			return fmt.Sprintf("%s: %s", Where(f), Summary(f))
		}
		return "failed after " + took
	case job.StatusStopped:
		return "stopped after " + took
	case job.StatusRunning:
		return "running"
	}
	parts := []string{fmt.Sprintf("passed: %s events", units.Count(r.Data.Events))}
	if m := r.Metrics; m != nil {
		parts = append(parts, "return "+units.Percent(m.TotalReturn), AnnualFigure("sharpe", units.Number(m.Sharpe), m),
			"trades "+units.Count(m.Trades))
	}
	return strings.Join(parts, " · ")
}

// Market says a job's market settings: "cash 100,000.00 · fees 1.50 bps ·
// slippage 0 bps · short selling off".
func Market(m contract.MarketInfo) string {
	short := "off"
	if m.AllowShort {
		short = "on"
	}
	return "cash " + units.Money(m.Cash) + " · fees " + bps(m.FeeBps) + " · slippage " + bps(m.SlippageBps) +
		" · short selling " + short
}

func bps(f float64) string {
	if f == float64(int64(f)) {
		return units.Count(int64(f)) + " bps"
	}
	return units.Number(f) + " bps"
}

// Window says a replay window as the user gave it ("FROM..TO", "-" for an
// open end, as the report's data.window holds it): "2026-01-05T00:00:00Z →
// open", or "all the data" when both ends are open.
func Window(w string) string {
	from, to, ok := strings.Cut(w, "..")
	if !ok {
		return w
	}
	if from == "-" && to == "-" {
		return "all the data"
	}
	open := func(s string) string {
		if s == "-" {
			return "open"
		}
		return s
	}
	return open(from) + " → " + open(to)
}

// ETA is a run's estimated time to the end as a clock reads it ("4:05"),
// or "" while an estimate would mislead: before a hundred bars (or 2 % of
// them, for a short run) and a second of running, the rate of the first
// bars, which include the strategy's warm-up, says little about the rest.
func ETA(p job.Progress) string {
	if p.ETA <= 0 || p.BarsPerSec <= 0 || p.Done < min(max(p.Total/50, 1), 100) {
		return ""
	}
	if elapsed := float64(p.Done) / p.BarsPerSec; elapsed < 1 {
		return ""
	}
	return units.Clock(p.ETA)
}
