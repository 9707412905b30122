package workbench

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"stratbench/internal/units"
	"stratbench/internal/words"
	"stratbench/job"
	"stratbench/themes"
	"stratbench/ui/components"
)

// procsPane shows the worker's process tree: memory and process-count gauges
// against their limits, current and peak, and the live processes.
type procsPane struct {
	scrollPane
	limits   job.Limits
	sample   job.ResourceSample
	tracking string // the tree tracking in force ("pidns", "fallback"); empty when not known
	live     bool   // sample holds current values; false for a finished or stored job
}

func newProcsPane() *procsPane {
	p := &procsPane{limits: job.DefaultLimits()}
	p.scrollPane.lines = p.lines
	return p
}

func (p *procsPane) setLimits(l job.Limits) { p.limits = l }

// apply takes a live sample.
func (p *procsPane) apply(s job.ResourceSample) {
	p.sample = s
	p.live = true
	if s.TreeTracking != "" {
		p.tracking = s.TreeTracking
	}
}

// final takes the report's peaks; the tree is gone once a job has ended.
func (p *procsPane) final(r job.Resources) {
	p.sample.PeakMemoryBytes = max(p.sample.PeakMemoryBytes, r.PeakMemoryBytes)
	p.sample.PeakProcesses = max(p.sample.PeakProcesses, r.PeakProcesses)
	p.sample.MemoryBytes, p.sample.Processes, p.sample.Procs = 0, 0, nil
	p.live = false
	if r.TreeTracking != "" {
		p.tracking = r.TreeTracking
	}
}

// View implements pane: the gauges stay in place, the process list below
// them scrolls.
func (p *procsPane) View(th themes.Theme) string {
	head, rows := p.parts(th)
	if len(head) >= p.h {
		return strings.Join(head[:max(p.h, 0)], "\n")
	}
	sub := scrollPane{lines: func(themes.Theme) []string { return rows }, scroll: p.scroll, w: p.w, h: p.h - len(head)}
	body := sub.View(th)
	p.scroll = sub.scroll
	return strings.Join(append(head, body), "\n")
}

// Update implements pane: the scroll keys move the process list.
func (p *procsPane) Update(msg tea.Msg, km keyMap) tea.Cmd {
	head, rows := p.parts(themes.Plain())
	p.scroll.handle(msg, km, len(rows), max(p.h-len(head), 1))
	return nil
}

func (p *procsPane) lines(th themes.Theme) []string {
	head, rows := p.parts(th)
	return append(head, rows...)
}

// gaugeBarWidth is the bars' width: it depends on the pane's width and the
// limits only, never on the values, so that the bars do not move as their
// labels change. Room is kept for the widest text a value up to its limit
// (or past it) can have.
func (p *procsPane) gaugeBarWidth() int {
	widest := 0
	for _, limit := range []string{units.Bytes(p.limits.MemoryBytes), units.Count(p.limits.Processes)} {
		w := ansi.StringWidth(fmt.Sprintf(" peak %s / %s %3.0f%% %s", "1,023.99 MiB", limit, 999.0, "✗"))
		widest = max(widest, w)
	}
	return min(max(p.w-11-widest, 4), 24)
}

// parts returns the fixed head (gauges, tracking, the list's header) and
// the process rows.
func (p *procsPane) parts(th themes.Theme) (head, rows []string) {
	s := p.sample
	gauges := []gaugeRow{
		p.gaugeRow("memory", float64(s.MemoryBytes), float64(s.PeakMemoryBytes), float64(p.limits.MemoryBytes),
			units.Bytes(s.MemoryBytes), units.Bytes(s.PeakMemoryBytes), units.Bytes(p.limits.MemoryBytes)),
		p.gaugeRow("processes", float64(s.Processes), float64(s.PeakProcesses), float64(p.limits.Processes),
			units.Count(s.Processes), units.Count(s.PeakProcesses), units.Count(p.limits.Processes)),
	}
	barW := p.gaugeBarWidth()
	for _, g := range gauges {
		st := th.Style(g.level)
		line := fmt.Sprintf("%-10s ", g.label) + st.Render(components.Gauge(g.used, g.peak, g.limit, barW)) + st.Render(g.text)
		if g.peakText == "" {
			head = append(head, line)
			continue
		}
		// The peak beside the gauge when it fits, under it otherwise.
		if ansi.StringWidth(line)+ansi.StringWidth(g.peakText)+3 <= p.w {
			head = append(head, line+th.Muted.Render(" · "+g.peakText))
		} else {
			head = append(head, line, strings.Repeat(" ", 11)+th.Muted.Render(g.peakText))
		}
	}
	if p.tracking != "" {
		head = append(head, th.Muted.Render(fmt.Sprintf("%-10s %s", "tracking", components.Sanitize(words.Tracking(p.tracking)))))
	}
	head = append(head, "")
	if !p.live {
		return append(head, th.Muted.Render("no live processes")), nil
	}
	head = append(head, th.Muted.Render(fmt.Sprintf("%7s %10s  %s", "PID", "RSS", "COMMAND")))
	for _, pr := range treeOrder(s.Procs) {
		indent := ""
		if pr.depth > 0 {
			indent = fmt.Sprintf("%*s└ ", 2*(pr.depth-1), "")
		}
		cmdW := max(p.w-21-ansi.StringWidth(indent), 8)
		rows = append(rows, fmt.Sprintf("%7d %10s  %s%s", pr.PID, units.Bytes(pr.RSSBytes), indent, shortCommand(components.Sanitize(pr.Command), cmdW)))
	}
	return head, rows
}

// shortCommand fits a command line in w cells: the program by its base
// name, and when still too long its start and its end, which names the
// script, with "…" between.
func shortCommand(cmd string, w int) string {
	prog, args, _ := strings.Cut(cmd, " ")
	if strings.Contains(prog, "/") {
		prog = prog[strings.LastIndex(prog, "/")+1:]
	}
	cmd = strings.TrimSpace(prog + " " + args)
	if ansi.StringWidth(cmd) <= w || w < 8 {
		return cmd
	}
	headW := w / 3
	tail := []rune(cmd)
	for ansi.StringWidth(string(tail)) > w-headW-1 {
		tail = tail[1:]
	}
	return ansi.Truncate(cmd, headW, "") + "…" + string(tail)
}

// gaugeRow is one gauge: the bar's values, the text after it and the peak.
type gaugeRow struct {
	label             string
	used, peak, limit float64
	level             themes.Level
	text              string
	peakText          string // "peak 18.21 MiB" while live; empty once the job ended (text is the peak then)
}

// gaugeRow builds a gauge: current / limit, percent with its level glyph,
// and the peak. A finished job has no current value: its peak is the
// value, said as such ("peak 281.50 MiB / 256.00 MiB 110% ✗").
func (p *procsPane) gaugeRow(label string, used, peak, limit float64, usedS, peakS, limitS string) gaugeRow {
	val := used
	if !p.live {
		val, used = peak, 0
	}
	level := components.LevelOf(val, limit)
	pct := 0.0
	if limit > 0 {
		pct = val / limit * 100
	}
	g := gaugeRow{label: label, used: used, peak: peak, limit: limit, level: level}
	if !p.live {
		g.text = fmt.Sprintf(" peak %s / %s %3.0f%% %s", peakS, limitS, pct, level.Glyph())
		return g
	}
	g.text = fmt.Sprintf(" %s / %s %3.0f%% %s", usedS, limitS, pct, level.Glyph())
	g.peakText = "peak " + peakS
	return g
}

// treeProc is a process with its depth in the tree.
type treeProc struct {
	job.Proc
	depth int
}

// treeOrder lists procs depth first from the roots (processes whose parent is
// not in the list), children in pid order.
func treeOrder(procs []job.Proc) []treeProc {
	byPID := make(map[int]bool, len(procs))
	children := map[int][]job.Proc{}
	for _, p := range procs {
		byPID[p.PID] = true
	}
	var roots []job.Proc
	for _, p := range procs {
		if byPID[p.PPID] && p.PPID != p.PID {
			children[p.PPID] = append(children[p.PPID], p)
		} else {
			roots = append(roots, p)
		}
	}
	byPIDOrder := func(a, b job.Proc) int { return a.PID - b.PID }
	slices.SortFunc(roots, byPIDOrder)
	out := make([]treeProc, 0, len(procs))
	seen := make(map[int]bool, len(procs))
	var walk func(p job.Proc, depth int)
	walk = func(p job.Proc, depth int) {
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
