package sweepview

import (
	"encoding/json"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"stratbench/internal/units"
	"stratbench/internal/words"
	"stratbench/sweep"
	"stratbench/themes"
	"stratbench/ui/components"
)

// The runs list: one row per run, as a hyperopt table has them: its
// number, its status, the objective, the return, the maximum drawdown,
// the trades and the win rate, then one column per swept param. A failed
// run's row says why it failed where the metrics go (read from its job's
// report, off the event loop, for the rows on screen).

// runStats are the metrics a row shows besides the objective, read once
// from a result's metrics when the row is first drawn.
type runStats struct {
	ret, drawdown, winRate *float64
	trades                 *int64
}

// statsOf returns r's stats, reading them the first time.
func (r *sweepRun) statsOf() *runStats {
	if r.stats == nil {
		var m struct {
			TotalReturn *float64 `json:"total_return"`
			MaxDrawdown *float64 `json:"max_drawdown"`
			WinRate     *float64 `json:"win_rate"`
			Trades      *int64   `json:"trades"`
		}
		if len(r.r.Metrics) > 0 {
			_ = json.Unmarshal(r.r.Metrics, &m) // a metrics object that does not read shows dashes
		}
		r.stats = &runStats{ret: m.TotalReturn, drawdown: m.MaxDrawdown, winRate: m.WinRate, trades: m.Trades}
	}
	return r.stats
}

// statusText is a run's status as its row says it.
func statusText(r *sweep.Result) string {
	switch {
	case r.Phase == sweep.PhaseTest && r.Status == sweep.RunPassed:
		// The fold's test run, after its train runs: the status
		// column says so.
		return "✓ test passed"
	case r.Phase == sweep.PhaseTest:
		return "✗ test " + r.FailureKind
	case r.Status == sweep.RunPassed:
		return "✓ passed"
	}
	return "✗ " + r.FailureKind
}

// A column of the runs list.
type runColumn struct {
	name  string
	width int
	left  bool // left-aligned (text); numbers are right-aligned
	cell  func(r *sweepRun) string
}

// markWidth is the cell kept after the objective's value for a mark on
// it (an annualised figure from a span too short to mean much).
const markWidth = 1

// The columns' widths: a value of up to "-1,234.56", a return of up to
// "-100.00 %", a count of up to "99,999" trades.
const (
	objectiveWidth = 9
	percentWidth   = 9
	tradesWidth    = 6
	maxStatusWidth = 16
	maxParamWidth  = 12
	columnGap      = 2
)

// objectiveSpan is the span an annualised objective's values come from
// (the first of the first runs with metrics: the runs share the sweep's
// window, the folds' windows are alike), and whether it is too short; ok
// is false for another objective, or before a run says.
func (m *sweepModel) objectiveSpan() (span string, short, ok bool) {
	if !words.IsAnnualised(m.obj.Metric) {
		return "", false, false
	}
	for i := range min(len(m.runs), 16) { // a few: a frame reads no thousand documents
		if span, short, ok := words.RunAnnualSpan(m.runs[i].r.Metrics); ok {
			return span, short, true
		}
	}
	return "", false, false
}

// spanMark is the mark of a run's annualised objective from a short span
// (words.ShortSpanMark), or a blank as wide.
func (m *sweepModel) spanMark(r *sweepRun) string {
	if words.IsAnnualised(m.obj.Metric) {
		if _, short, ok := words.RunAnnualSpan(r.r.Metrics); ok && short {
			return words.ShortSpanMark
		}
	}
	return strings.Repeat(" ", markWidth)
}

// runColumns lays the list's columns out for w cells: #, status and the
// objective always, the params next, then as many of return, drawdown,
// trades and win rate as leave the params their room. metrics are the
// optional columns kept, from the first.
func (m *sweepModel) runColumns(w int) (fixed, metrics, params []runColumn) {
	idW, statusW := max(len("#"), m.idW), min(max(len("STATUS"), m.statusW), maxStatusWidth)
	obj := m.obj.Metric
	fixed = []runColumn{
		{name: "#", width: idW, cell: func(r *sweepRun) string { return fmt.Sprint(r.r.Index) }},
		{name: "STATUS", width: statusW, left: true, cell: func(r *sweepRun) string { return statusText(&r.r) }},
		{name: strings.ToUpper(obj), width: min(max(objectiveWidth, len(obj)), maxParamWidth) + markWidth, cell: func(r *sweepRun) string {
			if !r.ok {
				return "—" + strings.Repeat(" ", markWidth)
			}
			// A value annualised from a short span carries the mark.
			return components.MetricText(r.value) + m.spanMark(r)
		}},
	}
	percent := func(f func(*runStats) *float64) func(*sweepRun) string {
		return func(r *sweepRun) string {
			if v := f(r.statsOf()); v != nil {
				return units.Percent(*v)
			}
			return "—"
		}
	}
	optional := []runColumn{
		{name: "RETURN", width: percentWidth, cell: percent(func(s *runStats) *float64 { return s.ret })},
		{name: "MAX DD", width: percentWidth, cell: percent(func(s *runStats) *float64 { return s.drawdown })},
		{name: "TRADES", width: tradesWidth, cell: func(r *sweepRun) string {
			if t := r.statsOf().trades; t != nil {
				return units.Count(*t)
			}
			return "—"
		}},
		{name: "WIN", width: percentWidth, cell: func(r *sweepRun) string {
			if s := r.statsOf(); s.winRate != nil && s.trades != nil && *s.trades > 0 {
				return units.Percent(*s.winRate)
			}
			return "—" // no trade, no win rate
		}},
	}
	// The objective's own column says it: no second one.
	keep := optional[:0]
	for i, c := range optional {
		if (i == 0 && obj == "total_return") || (i == 1 && obj == "max_drawdown") || (i == 2 && obj == "trades") ||
			(i == 3 && obj == "win_rate") {
			continue
		}
		keep = append(keep, c)
	}
	for _, ax := range m.start.Doc.Spec.Grid {
		c := runColumn{name: ax.Name, width: ansi.StringWidth(ax.Name)}
		for _, v := range ax.Values {
			c.width = max(c.width, ansi.StringWidth(valueText(v)))
			if _, isText := v.(string); isText {
				c.left = true
			}
		}
		c.width = min(c.width, maxParamWidth)
		name := ax.Name
		c.cell = func(r *sweepRun) string {
			if v, ok := r.r.Params.Get(name); ok {
				return valueText(v)
			}
			return "—"
		}
		params = append(params, c)
	}
	used := len("▸ ") + columnsWidth(fixed) + columnsWidth(params)
	for _, c := range keep {
		if used+columnGap+c.width > w {
			break
		}
		metrics = append(metrics, c)
		used += columnGap + c.width
	}
	return fixed, metrics, params
}

// columnsWidth is the width of cols with their gaps, the gap before the
// first included.
func columnsWidth(cols []runColumn) int {
	n := 0
	for _, c := range cols {
		n += columnGap + c.width
	}
	return n
}

// pad aligns s in a cell of w, cut with … when longer.
func pad(s string, w int, left bool) string {
	s = components.Clip(components.Sanitize(s), w)
	gap := strings.Repeat(" ", max(w-ansi.StringWidth(s), 0))
	if left {
		return s + gap
	}
	return gap + s
}

// runsTitle names what the list shows; in a walk-forward it says that the
// fold's test run ends the list and how to get there, since at 80×24 the
// list shows a few rows and the test run is seldom among them.
func (m *sweepModel) runsTitle() string {
	if m.start.Folds == nil {
		return fmt.Sprintf("best runs (%d)", len(m.ranked))
	}
	if m.testRun() < 0 {
		return fmt.Sprintf("best runs of fold %d's train window (%d)", m.fold, len(m.ranked))
	}
	return fmt.Sprintf("fold %d: best train runs (%d), test run (G)", m.fold, len(m.ranked)-1)
}

// shownRuns returns the positions in ranked of the rows the list shows
// in h lines (the column names take one): the selected run's page.
func (m *sweepModel) shownRuns(h int) (first, end int) {
	rows := max(h-1, 0)
	if m.selected >= rows {
		first = m.selected - rows + 1
	}
	return first, min(first+rows, len(m.ranked))
}

// runsView lists the runs in view, best first, the selected one marked,
// in w×h.
func (m *sweepModel) runsView(th themes.Theme, w, h int) string {
	if h <= 0 {
		return ""
	}
	if len(m.ranked) == 0 {
		return th.Muted.Render("no run has finished yet")
	}
	fixed, metrics, params := m.runColumns(w)
	gap := strings.Repeat(" ", columnGap)
	names := make([]string, 0, len(fixed)+len(metrics)+len(params))
	for _, c := range append(append(append([]runColumn(nil), fixed...), metrics...), params...) {
		names = append(names, pad(c.name, c.width, c.left))
	}
	lines := []string{th.Muted.Render("  " + strings.Join(names, gap))}
	first, end := m.shownRuns(h)
	for i := first; i < end; i++ {
		r := &m.runs[m.ranked[i]]
		style := th.OK
		if r.r.Status != sweep.RunPassed {
			style = th.Fail
		}
		var b strings.Builder
		b.WriteString(pad(fixed[0].cell(r), fixed[0].width, false))
		b.WriteString(gap + style.Render(pad(fixed[1].cell(r), fixed[1].width, true)))
		switch why := m.reasons[r.r.JobID]; {
		case r.r.Status != sweep.RunPassed && why != "":
			// Why it failed, across the metrics' columns: a failed run
			// has no result, and the metrics of the part it ran say
			// little.
			span := fixed[2].width + columnsWidth(metrics)
			b.WriteString(gap + style.Render(pad(why, span, true)))
		case r.r.Status != sweep.RunPassed:
			b.WriteString(gap + pad(fixed[2].cell(r), fixed[2].width, false))
			for _, c := range metrics {
				b.WriteString(gap + pad("—", c.width, c.left))
			}
		default:
			b.WriteString(gap + pad(fixed[2].cell(r), fixed[2].width, false))
			for _, c := range metrics {
				b.WriteString(gap + pad(c.cell(r), c.width, c.left))
			}
		}
		for _, c := range params {
			b.WriteString(gap + pad(c.cell(r), c.width, c.left))
		}
		marker := "  "
		if i == m.selected {
			marker = "▸ "
		}
		line := marker + b.String()
		if i == m.selected {
			line = th.Selected.Render(ansi.Strip(components.Fit(line, w)))
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// reasonsMsg carries why failed runs failed, by job id ("" when the job's
// report could not be read: the row keeps its kind alone).
type reasonsMsg map[string]string

// maxReasonReads bounds the reports one command reads.
const maxReasonReads = 64

// wantReasons returns a command that reads why the failed runs on screen
// failed from their jobs' reports, or nil when it knows them all (or has
// no store to read them from).
func (m *sweepModel) wantReasons() tea.Cmd {
	store := m.opts.Store
	if store == nil || m.job != nil || m.width <= 0 {
		return nil
	}
	first, end := m.shownRuns(m.runRows() + 1)
	var ids []string
	for i := first; i < end && len(ids) < maxReasonReads; i++ {
		r := &m.runs[m.ranked[i]].r
		if _, asked := m.reasons[r.JobID]; r.Status != sweep.RunPassed && !asked {
			m.reasons[r.JobID] = "" // asked: not asked again
			ids = append(ids, r.JobID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return func() tea.Msg {
		out := make(reasonsMsg, len(ids))
		for _, id := range ids {
			if rep, err := store.Load(id); err == nil && rep.Failure != nil {
				out[id] = strings.TrimSpace(words.Summary(rep.Failure))
			}
		}
		return out
	}
}
