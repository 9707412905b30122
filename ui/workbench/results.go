package workbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"stratbench/contract"
	"stratbench/internal/units"
	"stratbench/internal/words"
	"stratbench/job"
	"stratbench/themes"
	"stratbench/ui/components"
)

// metric is one formatted metric; core marks the keys every report
// carries, shown beside the chart.
type metric struct {
	name, value string
	core        bool
}

// resultsPane shows a finished job's metrics and its equity curve.
type resultsPane struct {
	scrollPane
	status   job.Status
	metrics  []metric
	symbols  map[string]contract.SymbolFigures
	metadata string
	// annual says where the annualised figures come from; short marks a
	// span too short for them to mean much (words.AnnualNote).
	annual      string
	annualShort bool
	equity      []float64
	equityErr   error
}

func newResultsPane() *resultsPane {
	p := &resultsPane{}
	p.scrollPane.lines = p.lines
	return p
}

// setReport takes a finished job's report.
func (p *resultsPane) setReport(r *job.Report) {
	p.status = r.Status
	p.metrics = formatMetrics(r.Metrics)
	p.symbols = r.Symbols
	p.annual, p.annualShort = words.AnnualNote(r.Metrics)
	p.metadata = ""
	if m := bytes.TrimSpace(r.Metadata); len(m) > 0 && string(m) != "null" {
		var compact bytes.Buffer
		if json.Compact(&compact, m) == nil {
			p.metadata = compact.String()
		}
	}
}

// annualLines is the note on the annualised figures wrapped to the pane.
func (p *resultsPane) annualLines() []string {
	return strings.Split(ansi.Wrap(components.Sanitize(p.annual), max(p.w, 20), ""), "\n")
}

// setEquity takes the equity curve, or the error that kept it from loading.
func (p *resultsPane) setEquity(vals []float64, err error) {
	p.equity, p.equityErr = vals, err
}

// formatMetrics formats a report's metrics in the order every printer
// shows them (contract.Metrics.List): the keys every report carries first,
// then the rest by name; an annualised figure from a short span carries
// words.ShortSpanMark. A report without metrics has none.
func formatMetrics(m *contract.Metrics) []metric {
	if m == nil {
		return nil
	}
	list := m.List()
	out := make([]metric, len(list))
	for i, mt := range list {
		value := components.Sanitize(mt.Text())
		if mark := words.AnnualMark(m, mt); mark != "" {
			value += " " + mark
		}
		out[i] = metric{name: mt.Key, value: value, core: mt.Core}
	}
	return out
}

// sideBySide is the width from which the chart goes beside the metrics.
const sideBySide = 64

func (p *resultsPane) lines(th themes.Theme) []string {
	switch {
	case p.status == "":
		return []string{th.Muted.Render("no results yet")}
	case p.status == job.StatusRunning:
		return []string{th.Muted.Render("results appear when the run ends")}
	}
	var note []string
	switch p.status {
	case job.StatusFailed:
		note = append(note, th.Fail.Render(themes.LevelFail.Glyph()+" the run failed: results up to the failure"))
	case job.StatusStopped:
		note = append(note, th.Warn.Render(themes.LevelWarn.Glyph()+" the run was stopped: results up to the stop"))
	}
	if p.annualShort {
		// Said first, whole: the figures beside the chart carry the mark.
		for _, l := range p.annualLines() {
			note = append(note, th.Warn.Render(l))
		}
	}
	// The metrics every report carries go beside or above the chart, the
	// others after it, so that the chart stays in view.
	core, extra := p.metricLines(th)
	extra = append(extra, p.symbolLines(th)...)
	if p.annual != "" && !p.annualShort {
		for _, l := range p.annualLines() {
			extra = append(extra, th.Muted.Render(l))
		}
	}
	if p.metadata != "" {
		extra = append(extra, th.Muted.Render("metadata ")+components.Sanitize(p.metadata))
	}
	if len(extra) > 0 {
		extra = append([]string{""}, extra...)
	}
	out := note
	if p.w >= sideBySide {
		leftW := 0
		for _, l := range core {
			leftW = max(leftW, ansi.StringWidth(l))
		}
		chart := p.chart(th, p.w-leftW-2, max(p.h-len(note), 6))
		for i := range max(len(core), len(chart)) {
			l, c := "", ""
			if i < len(core) {
				l = core[i]
			}
			if i < len(chart) {
				c = chart[i]
			}
			out = append(out, components.Fit(l, leftW)+"  "+c)
		}
		return append(out, extra...)
	}
	out = append(append(out, core...), "")
	out = append(out, p.chart(th, p.w, max(p.h-len(out), 4))...)
	return append(out, extra...)
}

// metricLines formats the metrics in two groups: the keys every report
// carries, and the others.
func (p *resultsPane) metricLines(th themes.Theme) (core, extra []string) {
	if len(p.metrics) == 0 {
		return []string{th.Muted.Render("no metrics")}, nil
	}
	nameW := 12
	for _, m := range p.metrics {
		nameW = max(nameW, len(m.name))
	}
	for _, m := range p.metrics {
		line := th.Muted.Render(fmt.Sprintf("%-*s", nameW, m.name)) + " " + th.Text.Render(fmt.Sprintf("%14s", m.value))
		if m.core {
			core = append(core, line)
		} else {
			extra = append(extra, line)
		}
	}
	return core, extra
}

// symbolsShown is how many traded symbols the pane lists.
const symbolsShown = 20

// symbolLines lists each traded symbol's figures (the report's "symbols"),
// a line each, after a blank line; none without them.
func (p *resultsPane) symbolLines(th themes.Theme) []string {
	if len(p.symbols) == 0 {
		return nil
	}
	names, more := contract.ShownSymbols(p.symbols, symbolsShown)
	nameW := len("symbol")
	for _, n := range names {
		nameW = max(nameW, ansi.StringWidth(components.Sanitize(n)))
	}
	nameW = min(nameW, 24)
	rows, widths := contract.SymbolTable(p.symbols, names)
	head := fmt.Sprintf("%-*s", nameW, "symbol")
	for i, c := range contract.SymbolColumns() {
		head += fmt.Sprintf("  %*s", widths[i], c)
	}
	out := []string{"", th.Muted.Render(head)}
	for k, n := range names {
		line := ""
		for i, v := range rows[k] {
			line += fmt.Sprintf("  %*s", widths[i], v)
		}
		out = append(out, th.Muted.Render(components.Fit(components.Sanitize(n), nameW))+th.Text.Render(line))
	}
	if more > 0 {
		out = append(out, th.Muted.Render(fmt.Sprintf("… and %s more symbols (the job's report has all)", units.Count(more))))
	}
	return out
}

// chart renders the equity curve in w×h cells: a caption, then columns of
// block glyphs with the top and bottom values as labels.
func (p *resultsPane) chart(th themes.Theme, w, h int) []string {
	switch {
	case p.equityErr != nil:
		return []string{th.Warn.Render(themes.LevelWarn.Glyph() + " equity curve: " + components.Sanitize(p.equityErr.Error()))}
	case len(p.equity) == 0:
		return []string{th.Muted.Render("no equity curve")}
	}
	caption := th.Muted.Render(fmt.Sprintf("equity curve (%s points)", units.Count(len(p.equity))))
	return append([]string{caption}, chart(th, p.equity, w, h-1)...)
}

// chart draws vals as columns of block glyphs, h rows of w cells, labelled
// with the highest and lowest value.
func chart(th themes.Theme, vals []float64, w, h int) []string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if lo > hi {
		return []string{th.Muted.Render("no finite equity values")}
	}
	hiLabel, loLabel := units.Money(hi), units.Money(lo)
	labelW := max(ansi.StringWidth(hiLabel), ansi.StringWidth(loLabel))
	plotW := w - labelW - 1
	if plotW < 4 || h < 2 {
		return []string{th.Muted.Render("too narrow for the equity chart")}
	}
	cols := downsample(vals, plotW)
	span := hi - lo
	eighths := make([]int, len(cols))
	for i, v := range cols {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			eighths[i] = 0
		case span == 0:
			eighths[i] = h * 4
		default:
			eighths[i] = 1 + int(math.Round((v-lo)/span*float64(h*8-1)))
		}
	}
	blocks := []rune(" " + components.SparkGlyphs)
	out := make([]string, h)
	for r := range h {
		fromBottom := h - 1 - r
		row := make([]rune, len(cols))
		for i, e := range eighths {
			row[i] = blocks[min(max(e-fromBottom*8, 0), 8)]
		}
		label := strings.Repeat(" ", labelW)
		switch r {
		case 0:
			label = fmt.Sprintf("%*s", labelW, hiLabel)
		case h - 1:
			label = fmt.Sprintf("%*s", labelW, loLabel)
		}
		out[r] = th.Muted.Render(label+"┤") + th.Accent.UnsetBold().Render(string(row))
	}
	return out
}

// downsample reduces vals to at most n points, each the last value of its
// bucket, so the curve keeps its end points.
func downsample(vals []float64, n int) []float64 {
	if n <= 0 {
		return nil
	}
	if len(vals) <= n {
		return slices.Clone(vals)
	}
	out := make([]float64, n)
	for i := range n {
		end := (i + 1) * len(vals) / n
		out[i] = vals[end-1]
	}
	return out
}
