package present

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"stratbench/contract"
	"stratbench/internal/termtext"
	"stratbench/internal/units"
	"stratbench/internal/words"
	"stratbench/job"
	"stratbench/sweep"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// SweepOutput is where and how a SweepPrinter writes.
type SweepOutput struct {
	Format string // "text", "json" or "jsonl"
	// Stdout takes the runs' lines and the summary; Stderr how to resume
	// a stopped sweep in the JSON formats; Progress (nil but at a
	// terminal) the progress line.
	Stdout, Stderr, Progress io.Writer
	// Report loads a run's job's report, for the failure of a failed run
	// (one that cannot be read leaves the line as it is); nil for none.
	Report func(jobID string) (*job.Report, error)
	// ResumeHint says how to resume the stopped sweep (ResumeHint's
	// argument is the document as it ends).
	ResumeHint func(doc *sweep.Document) string
}

// SweepPrinter prints a sweep as it runs and when it ends: text (a line
// per run, then the summary), json (the document at the end) or jsonl
// (each results line as it is appended, then the summary line). Progress
// (done, failed, runs/s, ETA) goes to Progress, a terminal only.
type SweepPrinter struct {
	o     SweepOutput
	doc   *sweep.Document
	total int64 // the runs planned
	start time.Time
	cols  runColumns // the run lines' layout

	mu     sync.Mutex
	done   int64 // results, the prior ones included
	new    int64 // results of this invocation
	failed int64
	err    error // the first write error
}

// NewSweepPrinter prints doc's sweep of total runs, prior of which ran
// before this invocation.
func NewSweepPrinter(o SweepOutput, doc *sweep.Document, total, prior int64) *SweepPrinter {
	return &SweepPrinter{o: o, doc: doc, total: total, done: prior, cols: runColumnsOf(doc)}
}

// Begin says which sweep runs (text only: the JSON outputs are data).
func (p *SweepPrinter) Begin() {
	p.start = time.Now()
	if p.o.Format != "text" {
		return
	}
	verb, runs := "sweep", Counted(p.total, "run", "runs")
	if p.done > 0 {
		// What this session runs, of the whole: the rest ran before.
		verb, runs = "resuming sweep", fmt.Sprintf("%s of %s left", units.Count(p.total-p.done), Counted(p.total, "run", "runs"))
	}
	p.write(fmt.Sprintf("%s %s: %s of %s on %s, objective %s\n", verb, p.doc.SweepID, runs,
		termtext.Line(p.doc.Strategy.Path), Counted(p.doc.Spec.Jobs, "slot", "slots"), objectiveOf(p.doc)))
}

// Result prints one new result.
func (p *SweepPrinter) Result(r sweep.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	p.new++
	if r.Status != sweep.RunPassed {
		p.failed++
	}
	switch p.o.Format {
	case "jsonl":
		b, err := json.Marshal(r)
		if err == nil {
			p.writeLocked(string(b) + "\n")
		}
	case "text":
		p.writeLocked(resultLine(r, p.cols) + "\n")
		if r.Status != sweep.RunPassed && p.o.Report != nil {
			// A report that cannot be read (a run lost with its job
			// folder) leaves the line as it is: the kind says enough.
			if rep, err := p.o.Report(r.JobID); err == nil && rep.Failure != nil {
				p.writeLocked(failureLine(rep.Failure) + "\n")
			}
		}
	}
	if w := p.o.Progress; w != nil {
		elapsed := time.Since(p.start)
		rate := float64(p.new) / elapsed.Seconds()
		eta := "—"
		if rate > 0 && p.total > p.done {
			eta = units.Duration(time.Duration(float64(p.total-p.done) / rate * float64(time.Second)))
		}
		fmt.Fprintf(w, "\r%s/%s done, %s failed, %.1f runs/s, ETA %s\x1b[K", units.Count(p.done), units.Count(p.total),
			units.Count(p.failed), rate, eta)
	}
}

// Finish prints the end: the summary (text), the document (json) or the
// summary line (jsonl). It returns the first write error.
func (p *SweepPrinter) Finish() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w := p.o.Progress; w != nil && p.new > 0 {
		fmt.Fprint(w, "\r\x1b[K")
	}
	hint := ""
	if p.doc.Status == sweep.StatusStopped && p.o.ResumeHint != nil {
		hint = p.o.ResumeHint(p.doc)
	}
	switch p.o.Format {
	case "json":
		b, err := json.MarshalIndent(p.doc, "", "  ")
		if err != nil {
			return err
		}
		p.writeLocked(string(b) + "\n")
	case "jsonl":
		b, err := json.Marshal(p.doc.Summary())
		if err != nil {
			return err
		}
		p.writeLocked(string(b) + "\n")
	default:
		p.writeLocked(termtext.Text(SweepText(p.doc, 10, hint)))
	}
	if p.o.Format != "text" && p.doc.Status == sweep.StatusStopped {
		// The JSON outputs are data: how to resume goes to stderr, as
		// the text output ends with it.
		fmt.Fprintf(p.o.Stderr, "stratbench: sweep %s stopped with %s of %s done; %s\n", p.doc.SweepID,
			units.Count(p.doc.Counts.Done), units.Count(p.doc.Counts.Total), hint)
	}
	return p.err
}

func (p *SweepPrinter) write(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writeLocked(s)
}

func (p *SweepPrinter) writeLocked(s string) {
	if p.err != nil {
		return
	}
	_, p.err = io.WriteString(p.o.Stdout, s)
}

// objectiveOf is the document's objective in words.
func objectiveOf(doc *sweep.Document) string {
	return sweep.Objective{Metric: doc.Spec.Metric, Minimize: doc.Spec.Minimize}.String()
}

// objectiveSpan is the span an annualised objective's values come from
// (the best run's, else the first run's with metrics), and whether it is
// short; ok is false for another objective or runs that do not say.
func objectiveSpan(doc *sweep.Document) (span string, short, ok bool) {
	if !words.IsAnnualised(valueOr(doc.Spec.Metric, sweep.DefaultMetric)) {
		return "", false, false
	}
	var metrics json.RawMessage
	for _, r := range doc.Runs {
		if len(r.Metrics) > 0 && (metrics == nil || doc.Best != nil && r.JobID == doc.Best.JobID) {
			metrics = r.Metrics
		}
	}
	return words.RunAnnualSpan(metrics)
}

// annualObjective says, for an annualised objective (sharpe, cagr…), the
// span its values come from, from the best run's metrics (else the first
// with metrics): ", annualised from 6d 23h of data", and when that is too
// short for it to mean much, that the runs' values are marked; "" for any
// other objective, or runs that do not say.
func annualObjective(doc *sweep.Document) string {
	span, short, ok := objectiveSpan(doc)
	switch {
	case !ok:
		return ""
	case short:
		return fmt.Sprintf(", annualised from %s of data: under %s, too short to mean much (values marked %s)",
			span, words.MinAnnualSpan(), words.ShortSpanMark)
	}
	return ", annualised from " + span + " of data"
}

// outcomeWidth is the width of resultLine's outcome column in runes: that
// of the widest outcome, "✗ failed (exception)" or "(processes)", so that
// the metric column lines up under failed runs too.
const outcomeWidth = 20

// valueWidth is the width of resultLine's value column in runes: that of
// metricText's widest usual value ("-0.0005124", "-1.257e-05"), so that the
// params do not run into it.
const valueWidth = 10

// runColumns is how resultLine lays out the run lines of one sweep so that
// they line up: the objective and the width of the where column.
type runColumns struct {
	metric string
	whereW int // the widest "#N" or "fold K train #N" the sweep can have
}

// runColumnsOf sizes the run lines of doc's sweep from its grid and folds
// (a line is printed as its run ends, before the widest has come).
func runColumnsOf(doc *sweep.Document) runColumns {
	size := int64(1)
	for _, ax := range doc.Spec.Grid {
		if size > 1<<40 {
			break // more index digits than any sweep runs
		}
		size *= int64(max(len(ax.Values), 1))
	}
	where := whereText(nil, "", size-1)
	if doc.Spec.WalkForward != nil || doc.WalkForward != nil {
		last := 0
		if doc.WalkForward != nil {
			last = max(len(doc.WalkForward.Folds)-1, 0)
		}
		where = whereText(&last, sweep.PhaseTrain, size-1)
	}
	return runColumns{metric: doc.Spec.Metric, whereW: utf8.RuneCountInString(where)}
}

// whereText is which run a line is: "#3", or "fold 1 train #3" and
// "fold 1 test  #3" (the phases padded alike) in a walk-forward.
func whereText(fold *int, phase sweep.Phase, index int64) string {
	if fold == nil {
		return fmt.Sprintf("#%d", index)
	}
	return fmt.Sprintf("fold %d %-5s #%d", *fold, phase, index)
}

// resultLine is one run as the text output lists it.
func resultLine(r sweep.Result, cols runColumns) string {
	outcome := "✓ passed"
	if r.Status != sweep.RunPassed {
		outcome = "✗ failed (" + r.FailureKind + ")"
	}
	value := "—"
	if v, ok := (sweep.Objective{Metric: cols.metric}).Value(&r); ok {
		value = metricText(v)
		if _, short, ok := words.RunAnnualSpan(r.Metrics); ok && short && words.IsAnnualised(cols.metric) {
			value += " " + words.ShortSpanMark // annualised from a short span: objective says so
		}
	}
	return termtext.Line(fmt.Sprintf("%s %-*s %s %s  %s  %s  job %s", padRight(whereText(r.Fold, r.Phase, r.Index), cols.whereW),
		outcomeWidth, outcome, cols.metric, padRight(value, valueWidth), r.Params, units.Millis(float64(r.DurationMS)), r.JobID))
}

// failureWidth is how many runes of a failure's message failureLine
// keeps: a terminal's line, less the indent, without wrapping.
const failureWidth = 100

// failureLine is why a run failed, indented under its result line: where
// it failed and the line of its message that says most, cut to
// failureWidth runes.
func failureLine(f *contract.Failure) string {
	why := words.Where(f)
	if msg := strings.TrimSpace(words.Summary(f)); msg != "" {
		why += ": " + msg
	}
	return "      " + clip(termtext.Line(why), failureWidth)
}

// SweepText is the sweep as the text output and `status SWEEP_ID` show
// it: its status and counts, the best run, the top runs, and the folds of
// a walk-forward, and for a stopped sweep hint, how to resume it (the
// command that resumes it as it ran, or why a resume would refuse it).
// The caller makes it safe for a terminal.
func SweepText(doc *sweep.Document, top int, hint string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s  sweep %s", sweepBadge(doc.Status), doc.SweepID)
	if doc.FinishedAt != nil {
		fmt.Fprintf(&b, " · took %s", units.Millis(float64(doc.DurationMS)))
	}
	b.WriteString("\n")
	c := doc.Counts
	fmt.Fprintf(&b, "runs      %s of %s done: %s passed, %s failed\n", units.Count(c.Done), units.Count(c.Total),
		units.Count(c.Passed), units.Count(c.Failed))
	fmt.Fprintf(&b, "strategy  %s\n", doc.Strategy.Path)
	fmt.Fprintf(&b, "data      %s, %s to %s\n", doc.Data.Source, doc.Data.From, doc.Data.To)
	fmt.Fprintf(&b, "objective %s%s\n", objectiveOf(doc), annualObjective(doc))
	if doc.Best == nil {
		b.WriteString("best      none (no run passed)\n")
	} else {
		label := ""
		if k, ok := bestFold(doc); ok {
			label = "(" + bestFoldText(doc, k) + ") "
		}
		mark := ""
		if _, short, ok := objectiveSpan(doc); ok && short {
			mark = " " + words.ShortSpanMark
		}
		fmt.Fprintf(&b, "best      %s#%d %s: %s %s%s (job %s)\n", label, doc.Best.Index, doc.Best.Params, doc.Best.Metric,
			metricText(doc.Best.Value), mark, doc.Best.JobID)
	}
	b.WriteString(RobustnessLine(doc))
	if doc.WalkForward == nil && len(doc.Runs) > 0 {
		n := min(top, len(doc.Runs))
		// Runs rank failed last: with none passed, the list is no ranking.
		switch {
		case doc.Best != nil:
			fmt.Fprintf(&b, "\ntop %d of %s\n", n, Counted(len(doc.Runs), "run", "runs"))
		case n < len(doc.Runs):
			fmt.Fprintf(&b, "\nno run passed; %d of the %s that failed\n", n, units.Count(len(doc.Runs)))
		default:
			fmt.Fprintf(&b, "\nno run passed; the %s that failed\n", Counted(len(doc.Runs), "run", "runs"))
		}
		cols := runColumnsOf(doc)
		for _, r := range doc.Runs[:n] {
			b.WriteString("  " + resultLine(r, cols) + "\n")
		}
	}
	if wf := doc.WalkForward; wf != nil {
		b.WriteString("\nwalk-forward folds (windows half-open, UTC)\n")
		winW := 11
		for _, f := range wf.Folds {
			winW = max(winW, utf8.RuneCountInString(windowText(f.Train)), utf8.RuneCountInString(windowText(f.Test)))
		}
		// In sample: the objective the best was picked by, and its
		// return, which the efficiency compares with the test's.
		// (A column of its own unless it is the return.)
		objective := valueOr(doc.Spec.Metric, sweep.DefaultMetric)
		objHead, objW := "", 0
		if objective != "total_return" {
			objHead = "IN " + strings.ToUpper(objective)
			objW = max(10, utf8.RuneCountInString(objHead)) + 1
		}
		fmt.Fprintf(&b, "  %-4s %s %s %-26s%s %10s %11s\n", "FOLD", padRight("TRAIN", winW), padRight("TEST", winW), "BEST PARAMS",
			padLeft(objHead, objW), "IN RETURN", "OUT RETURN")
		for k, f := range wf.Folds {
			best, isObj, is, oos := "—", "—", "—", "—"
			if f.BestParams != nil {
				best = f.BestParams.String()
			}
			if f.InSample != nil {
				isObj, is = metricText(f.InSample.Value), units.Percent(f.InSample.Return)
			}
			var m struct {
				TotalReturn *float64 `json:"total_return"`
			}
			if len(f.OutOfSample) > 0 && json.Unmarshal(f.OutOfSample, &m) == nil && m.TotalReturn != nil {
				oos = units.Percent(*m.TotalReturn)
			}
			if objW == 0 {
				isObj = ""
			}
			fmt.Fprintf(&b, "  %-4d %s %s %s%s %s %s\n", k, padRight(windowText(f.Train), winW), padRight(windowText(f.Test), winW),
				padRight(best, 26), padLeft(isObj, objW), padLeft(is, 10), padLeft(oos, 11))
		}
		if st := wf.OutOfSample; st != nil {
			fmt.Fprintf(&b, "out of sample  %s stitched: return %s, CAGR %s, %s fills, %s trades\n", Counted(st.Folds, "fold", "folds"),
				units.Percent(st.TotalReturn), units.Percent(st.CAGR), units.Count(st.Fills), units.Count(st.Trades))
		}
		if wf.Efficiency != nil {
			fmt.Fprintf(&b, "efficiency     %s (out-of-sample over in-sample return per year, mean over folds)\n", units.Number(*wf.Efficiency))
		} else {
			fmt.Fprintf(&b, "efficiency     — (%s; it needs every fold's in-sample return above 0 and its test run)\n",
				wf.EfficiencyWhy(doc.Status != sweep.StatusRunning))
		}
	}
	if doc.Status == sweep.StatusStopped {
		// Said last, where the eye lands when the sweep has just stopped:
		// how to resume it (hint).
		b.WriteString("\n" + hint + "\n")
	}
	return b.String()
}

// bestFold is the fold whose train run the document's best is, in a
// walk-forward (ok false in a plain sweep): the best there is the in-sample
// best of the latest fold with a passed train run, which the text must not
// let pass for a tested recommendation. The run itself says its fold; a
// document without its runs (sweeps lists them with) falls back on the
// latest fold with best params, which is how the sweep picks it.
func bestFold(doc *sweep.Document) (int, bool) {
	if doc.Best == nil || doc.WalkForward == nil {
		return 0, false
	}
	for _, r := range doc.Runs {
		if r.JobID == doc.Best.JobID && r.Fold != nil {
			return *r.Fold, true
		}
	}
	for k := len(doc.WalkForward.Folds) - 1; k >= 0; k-- {
		if doc.WalkForward.Folds[k].BestParams != nil {
			return k, true
		}
	}
	return 0, false
}

// bestFoldText says which run a walk-forward's best is: fold k's train
// sweep, and whether k is the last fold.
func bestFoldText(doc *sweep.Document, k int) string {
	if k == len(doc.WalkForward.Folds)-1 {
		return fmt.Sprintf("fold %d train, the in-sample best of the latest fold", k)
	}
	return fmt.Sprintf("fold %d train, the in-sample best of the latest fold with one", k)
}

// metricText writes an objective's value with four significant digits
// (a return of 0.0021 is not 0.00), with separators from 1,000 on.
func metricText(v float64) string {
	if math.Abs(v) >= 1000 || math.IsNaN(v) || math.IsInf(v, 0) {
		return units.Number(v)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// padRight pads s with spaces to n characters.
func padRight(s string, n int) string {
	return s + strings.Repeat(" ", max(n-utf8.RuneCountInString(s), 0))
}

// padLeft pads s with spaces on its left to n characters.
func padLeft(s string, n int) string {
	return strings.Repeat(" ", max(n-utf8.RuneCountInString(s), 0)) + s
}

// windowText is a half-open window in few characters (UTC): days alone
// when both ends are at midnight.
func windowText(w sweep.Window) string {
	layout := "01-02 15:04"
	if f, t := w.From.UTC(), w.To.UTC(); f.Equal(f.Truncate(24*time.Hour)) && t.Equal(t.Truncate(24*time.Hour)) {
		layout = "01-02"
	}
	return w.From.UTC().Format(layout) + "→" + w.To.UTC().Format(layout)
}

// sweepBadge is a sweep status as the status line shows it.
func sweepBadge(s sweep.Status) string {
	switch s {
	case sweep.StatusPassed:
		return "✓ PASSED"
	case sweep.StatusFailed:
		return "✗ FAILED"
	case sweep.StatusStopped:
		return "■ STOPPED"
	case sweep.StatusRunning:
		return "● RUNNING"
	}
	return "○ " + strings.ToUpper(string(s))
}

// Counted is n with its noun, singular for 1: "1 run", "2 runs",
// "1,000 runs".
func Counted[T ~int | ~int64](n T, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return units.Count(n) + " " + many
}

// RobustnessLine is the robustness block in the text summary: one line
// with the plain verdict, or why there is none ("" while the sweep runs,
// and for a document of a version without it).
func RobustnessLine(doc *sweep.Document) string {
	rb := doc.Robustness
	if rb == nil {
		if doc.RobustnessReason == "" {
			return ""
		}
		return "robustness not computed: " + doc.RobustnessReason + "\n"
	}
	return fmt.Sprintf("robustness %s: deflated Sharpe %s, PBO %s (%s splits of %d blocks), best PSR %s, out-of-sample loss %s, %s\n",
		rb.Verdict, prob(rb.DeflatedSharpe), prob(rb.PBO), units.Count(rb.Combinations), rb.Blocks,
		prob(rb.BestPSR), prob(rb.OOSLossProbability), Counted(rb.Trials, "trial", "trials"))
}

// prob writes a probability with two decimals, or three below 0.01 and
// above 0.99 (0.999 is not 1).
func prob(p float64) string {
	if p > 0 && p < 0.01 || p > 0.99 && p < 1 {
		return fmt.Sprintf("%.3f", p)
	}
	return fmt.Sprintf("%.2f", p)
}

// SweepsText is the sweep list as a table. The RUNS and FAILED columns
// are as wide as their widest value: a sweep of a million runs does not
// run into its neighbours.
func SweepsText(docs []*sweep.Document, loc *time.Location) string {
	runs, failed := make([]string, len(docs)), make([]string, len(docs))
	runsW, failedW := len("RUNS"), len("FAILED")
	for i, d := range docs {
		runs[i] = units.Count(d.Counts.Done) + "/" + units.Count(d.Counts.Total)
		failed[i] = units.Count(d.Counts.Failed)
		runsW, failedW = max(runsW, utf8.RuneCountInString(runs[i])), max(failedW, utf8.RuneCountInString(failed[i]))
	}
	row := func(id, status, strategy, started, runs, failed, best string) string {
		return fmt.Sprintf("%-30s %-10s %-20s %-16s  %s  %s  %s\n", id, status, strategy, started, padLeft(runs, runsW),
			padLeft(failed, failedW), best)
	}
	out := row("SWEEP", "STATUS", "STRATEGY", "STARTED", "RUNS", "FAILED", "BEST")
	for i, d := range docs {
		best := "—"
		if d.Best != nil {
			best = fmt.Sprintf("%s %s %s", d.Best.Params, d.Best.Metric, metricText(d.Best.Value))
			if _, short, ok := objectiveSpan(d); ok && short {
				best += " " + words.ShortSpanMark // annualised from a short span (status SWEEP_ID says how short)
			}
			if k, ok := bestFold(d); ok {
				// A walk-forward's best is a fold's in-sample best.
				best = fmt.Sprintf("fold %d train: %s", k, best)
			}
		}
		out += row(d.SweepID, string(d.Status), clip(filepath.Base(d.Strategy.Path), 20), d.StartedAt.In(loc).Format("2006-01-02 15:04"),
			runs[i], failed[i], best)
	}
	return out
}

// WriteSweeps writes the sweep list, newest first: as text
// (SweepsText, with how to open one when a person reads it at a
// terminal), or as "json", the documents without their runs.
func WriteSweeps(w io.Writer, docs []*sweep.Document, format string, atTerminal bool) error {
	if format == "json" {
		briefs := make([]any, len(docs))
		for i, d := range docs {
			briefs[i] = d.Brief()
		}
		return WriteJSON(w, briefs)
	}
	text := SweepsText(docs, time.Local)
	if atTerminal && len(docs) > 0 {
		text += "\nopen one in the sweep view: stratbench sweep view SWEEP_ID (without an id: choose from this list)\n"
	}
	_, err := io.WriteString(w, termtext.Text(text))
	return err
}
