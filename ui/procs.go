package ui

import (
	"fmt"
	"slices"

	"github.com/charmbracelet/x/ansi"

	"stratbench/engine"
	"stratbench/internal/units"
	"stratbench/internal/words"
	"stratbench/themes"
)

// procsPane shows the worker's process tree: memory and process-count gauges
// against their limits, current and peak, and the live processes.
type procsPane struct {
	scrollPane
	limits   engine.Limits
	sample   engine.ResourceSample
	tracking string // the tree tracking in force ("pidns", "fallback"); empty when not known
	live     bool   // sample holds current values; false for a finished or stored job
}

func newProcsPane() *procsPane {
	p := &procsPane{limits: engine.DefaultLimits()}
	p.scrollPane.lines = p.lines
	return p
}

func (p *procsPane) setLimits(l engine.Limits) { p.limits = l }

// apply takes a live sample.
func (p *procsPane) apply(s engine.ResourceSample) {
	p.sample = s
	p.live = true
	if s.TreeTracking != "" {
		p.tracking = s.TreeTracking
	}
}

// final takes the report's peaks; the tree is gone once a job has ended.
func (p *procsPane) final(r engine.Resources) {
	p.sample.PeakMemoryBytes = max(p.sample.PeakMemoryBytes, r.PeakMemoryBytes)
	p.sample.PeakProcesses = max(p.sample.PeakProcesses, r.PeakProcesses)
	p.sample.MemoryBytes, p.sample.Processes, p.sample.Procs = 0, 0, nil
	p.live = false
	if r.TreeTracking != "" {
		p.tracking = r.TreeTracking
	}
}

func (p *procsPane) lines(th themes.Theme) []string {
	s := p.sample
	gauges := []gaugeRow{
		p.gaugeRow("memory", float64(s.MemoryBytes), float64(s.PeakMemoryBytes), float64(p.limits.MemoryBytes),
			units.Bytes(s.MemoryBytes), units.Bytes(s.PeakMemoryBytes), units.Bytes(p.limits.MemoryBytes)),
		p.gaugeRow("processes", float64(s.Processes), float64(s.PeakProcesses), float64(p.limits.Processes),
			units.Count(s.Processes), units.Count(s.PeakProcesses), units.Count(p.limits.Processes)),
	}
	textW := 0
	for _, g := range gauges {
		textW = max(textW, ansi.StringWidth(g.text))
	}
	barW := max(p.w-11-textW, 4)
	var out []string
	for _, g := range gauges {
		st := th.Style(g.level)
		out = append(out, fmt.Sprintf("%-10s ", g.label)+st.Render(gauge(g.used, g.peak, g.limit, barW))+st.Render(g.text))
	}
	if p.tracking != "" {
		out = append(out, th.Muted.Render(fmt.Sprintf("%-10s %s", "tracking", sanitize(words.Tracking(p.tracking)))))
	}
	out = append(out, "")
	if !p.live {
		return append(out, th.Muted.Render("no live processes"))
	}
	out = append(out, th.Muted.Render(fmt.Sprintf("%7s %10s  %s", "PID", "RSS", "COMMAND")))
	for _, pr := range treeOrder(s.Procs) {
		indent := ""
		if pr.depth > 0 {
			indent = fmt.Sprintf("%*s└ ", 2*(pr.depth-1), "")
		}
		out = append(out, fmt.Sprintf("%7d %10s  %s%s", pr.PID, units.Bytes(pr.RSSBytes), indent, sanitize(pr.Command)))
	}
	return out
}

// gaugeRow is one gauge: the bar's values and the text after it.
type gaugeRow struct {
	label             string
	used, peak, limit float64
	level             themes.Level
	text              string
}

// gaugeRow builds a gauge: current / limit, percent with its level glyph,
// and the peak. A finished job has no current value; its peak decides.
func (p *procsPane) gaugeRow(label string, used, peak, limit float64, usedS, peakS, limitS string) gaugeRow {
	cur, val := usedS, used
	if !p.live {
		cur, val, used = "—", peak, 0
	}
	level := levelOf(val, limit)
	pct := 0.0
	if limit > 0 {
		pct = val / limit * 100
	}
	text := fmt.Sprintf(" %s / %s %3.0f%% %s peak %s", cur, limitS, pct, level.Glyph(), peakS)
	return gaugeRow{label: label, used: used, peak: peak, limit: limit, level: level, text: text}
}

// treeProc is a process with its depth in the tree.
type treeProc struct {
	engine.Proc
	depth int
}

// treeOrder lists procs depth first from the roots (processes whose parent is
// not in the list), children in pid order.
func treeOrder(procs []engine.Proc) []treeProc {
	byPID := make(map[int]bool, len(procs))
	children := map[int][]engine.Proc{}
	for _, p := range procs {
		byPID[p.PID] = true
	}
	var roots []engine.Proc
	for _, p := range procs {
		if byPID[p.PPID] && p.PPID != p.PID {
			children[p.PPID] = append(children[p.PPID], p)
		} else {
			roots = append(roots, p)
		}
	}
	byPIDOrder := func(a, b engine.Proc) int { return a.PID - b.PID }
	slices.SortFunc(roots, byPIDOrder)
	out := make([]treeProc, 0, len(procs))
	seen := make(map[int]bool, len(procs))
	var walk func(p engine.Proc, depth int)
	walk = func(p engine.Proc, depth int) {
		if seen[p.PID] {
			return
		}
		seen[p.PID] = true
		out = append(out, treeProc{p, depth})
		kids := children[p.PID]
		slices.SortFunc(kids, byPIDOrder)
		for _, k := range kids {
			walk(k, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	// A parent cycle has no root; list what the walk missed flat.
	for _, p := range procs {
		if !seen[p.PID] {
			walk(p, 0)
		}
	}
	return out
}
