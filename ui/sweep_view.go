// This file is long because it draws one pane with four parts that share
// its layout arithmetic: progress, the ranked runs, the heatmap with its
// legend, and the walk-forward's folds, at every size from 80x24 up.

package ui

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"stratbench/internal/units"
	"stratbench/internal/words"
	"stratbench/sweep"
	"stratbench/themes"
)

// View implements tea.Model.
func (m *sweepModel) View() tea.View {
	var body string
	if m.job != nil {
		body = m.job.render()
	} else {
		body = m.render()
	}
	v := tea.NewView(body)
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "stratbench · sweep · " + m.statusWord()
	return v
}

// statusWord is the sweep's state in one word.
func (m *sweepModel) statusWord() string {
	switch m.state {
	case sweepRunning:
		return "RUNNING"
	case sweepStopping:
		return "STOPPING"
	}
	switch m.doc.Status {
	case sweep.StatusPassed:
		return "PASSED"
	case sweep.StatusFailed:
		return "FAILED"
	case sweep.StatusStopped:
		return "STOPPED"
	}
	return "ENDED"
}

// render draws the sweep view: header, the runs and the heatmap (side by
// side when wide), the folds of a walk-forward, and the footer.
func (m *sweepModel) render() string {
	w, h := m.width, m.height
	if w <= 0 || h <= 0 {
		return ""
	}
	th := m.theme
	if w < minWidth || h < minHeight+2 {
		return fitLines(fmt.Sprintf("%s sweep %s · terminal too small (%d×%d)", th.Title.Render("stratbench"), m.statusWord(), w, h), w, h)
	}
	header := m.sweepHeader(th)
	footer := m.sweepFooter(th)
	bodyH := h - lipgloss.Height(header) - lipgloss.Height(footer)
	var body string
	switch {
	case m.showHelp:
		body = m.sweepHelp(th, w, bodyH)
	default:
		body = m.sweepBody(th, w, bodyH)
	}
	return strings.Join([]string{header, body, footer}, "\n")
}

// sweepLayout is the panes' heights in a body of w×h: the runs' and the
// heatmap's (side by side when wide), and the folds' below them (0 for a
// plain sweep).
type sweepLayout struct {
	wide                 bool
	runsH, heatH, foldsH int
}

func (m *sweepModel) layout(w, h int) sweepLayout {
	var l sweepLayout
	if n := len(m.start.Folds); n > 0 {
		// The column names, the folds, the hint and the summary in a
		// frame; at 80×24 that is cut to three folds and the summary.
		l.foldsH = min(n+5, max(h/3, 7))
	}
	mainH := h - l.foldsH
	l.wide = w >= 110
	if l.wide {
		l.runsH, l.heatH = mainH, mainH
	} else {
		l.runsH = max(mainH*2/5, 4)
		l.heatH = mainH - l.runsH
	}
	return l
}

// sweepBodyHeight is the height between the header and the footer.
func (m *sweepModel) sweepBodyHeight() int { return m.height - sweepHeaderHeight - 1 }

// sweepHeaderHeight is the sweep header's lines.
const sweepHeaderHeight = 3

// runRows is the number of runs the list shows: a page for pgup/pgdn.
func (m *sweepModel) runRows() int {
	return max(m.layout(m.width, m.sweepBodyHeight()).runsH-3, 1) // the frame and the column names
}

// sweepBody lays the panes out in w×h.
func (m *sweepModel) sweepBody(th themes.Theme, w, h int) string {
	l := m.layout(w, h)
	foldsH := l.foldsH
	var main string
	if l.wide {
		leftW := w * 9 / 20
		main = joinH(frame(th, m.runsTitle(), m.runsView(th, leftW-2, l.runsH-2), leftW, l.runsH, true),
			frame(th, m.heatmapTitle(), m.heatmapView(th, w-leftW-2, l.heatH-2), w-leftW, l.heatH, false))
	} else {
		main = frame(th, m.runsTitle(), m.runsView(th, w-2, l.runsH-2), w, l.runsH, true) + "\n" +
			frame(th, m.heatmapTitle(), m.heatmapView(th, w-2, l.heatH-2), w, l.heatH, false)
	}
	if foldsH == 0 {
		return main
	}
	title, folds := m.foldsPane(th, w-2, foldsH-2)
	return main + "\n" + frame(th, title, folds, w, foldsH, false)
}

// sweepHeader is three lines: what runs, its progress, a progress bar.
func (m *sweepModel) sweepHeader(th themes.Theme) string {
	w := m.width
	sep := th.Muted.Render(" · ")
	d := m.doc
	// "max sharpe" rather than "objective sharpe (maximised)", and the
	// slots only when they fit, so that 80 columns show the objective.
	goal := "max "
	if m.obj.Minimize {
		goal = "min "
	}
	line1 := th.Title.Render("stratbench") + "  " + th.Accent.Render("sweep "+sanitize(d.SweepID)) + sep +
		th.Text.Render(sanitize(filepath.Base(d.Strategy.Path))) + sep + th.Muted.Render(goal) + th.Text.Render(sanitize(m.obj.Metric))
	if span, short, ok := m.objectiveSpan(); ok {
		// An annualised objective: the span its values come from, and
		// the mark its values carry when that is too short.
		note := th.Muted.Render(" from " + span)
		if short {
			note = th.Warn.Render(" " + words.ShortSpanMark + " from " + span + ", too short to annualise")
		}
		if lipgloss.Width(line1+note) <= w {
			line1 += note
		}
	}
	if slots := sep + th.Muted.Render(fmt.Sprintf("%d slots", d.Spec.Jobs)); lipgloss.Width(line1+slots) <= w {
		line1 += slots
	}
	done, failed := m.counts()
	total := max(m.start.Total, done)
	line2 := m.badge(th) + "  " + th.Text.Render(fmt.Sprintf("%s/%s runs", units.Count(done), units.Count(total)))
	if failed > 0 {
		line2 += sep + th.Fail.Render(units.Count(failed)+" failed")
	} else {
		line2 += sep + th.Muted.Render("0 failed")
	}
	until := m.now()
	if !m.ended.IsZero() {
		until = m.ended
	}
	elapsed := until.Sub(m.began)
	if m.newRuns > 0 && elapsed > 0 {
		rate := float64(m.newRuns) / elapsed.Seconds()
		line2 += sep + th.Text.Render(fmt.Sprintf("%.1f runs/s", rate))
		if m.state == sweepRunning && total > done {
			line2 += sep + th.Muted.Render("ETA ") + th.Text.Render(units.Clock(time.Duration(float64(total-done)/rate*float64(time.Second))))
		}
	}
	if m.state == sweepStopping {
		line2 += sep + th.Warn.Render("stopping: the runs in flight finish their on_finish")
	}
	var line3 string
	if total > 0 {
		barW := min(max(w/3, 10), 40)
		line3 = th.Accent.UnsetBold().Render(gauge(float64(done), 0, float64(total), barW)) +
			th.Text.Render(fmt.Sprintf(" %3.0f%%", float64(done)/float64(total)*100))
	}
	if b := d.Best; b != nil {
		// A walk-forward's best is a fold's in-sample best (the latest
		// fold's with one): said, so that it does not pass for a tested
		// recommendation.
		label := "best "
		if d.WalkForward != nil {
			if fold, ok := m.foldOfJob(b.JobID); ok {
				label = fmt.Sprintf("fold %d train best ", fold)
			}
		}
		line3 += sep + th.Muted.Render(label) + th.OK.Render(fmt.Sprintf("#%d %s %s", b.Index, sanitize(b.Params.String()), metricText(b.Value)))
	}
	return strings.Join([]string{fit(line1, w), fit(line2, w), fit(line3, w)}, "\n")
}

// foldOfJob returns the walk-forward fold of the run of job id, from the
// results seen.
func (m *sweepModel) foldOfJob(id string) (int, bool) {
	for i := range m.runs {
		if r := &m.runs[i].r; r.JobID == id && r.Fold != nil {
			return *r.Fold, true
		}
	}
	return 0, false
}

// counts returns the runs done and failed, from the results seen.
func (m *sweepModel) counts() (done, failed int64) {
	for i := range m.runs {
		if m.runs[i].r.Status != sweep.RunPassed {
			failed++
		}
	}
	return int64(len(m.runs)), failed
}

func (m *sweepModel) badge(th themes.Theme) string {
	word := m.statusWord()
	style := th.Muted
	switch word {
	case "PASSED":
		style = th.OK
	case "FAILED":
		style = th.Fail
	case "STOPPED", "STOPPING":
		style = th.Warn
	case "RUNNING":
		style = th.Accent
	}
	return style.Render(glyphOf(word) + " " + word)
}

func glyphOf(word string) string {
	switch word {
	case "PASSED":
		return "✓"
	case "FAILED":
		return "✗"
	case "STOPPED", "STOPPING":
		return "■"
	case "RUNNING":
		return "●"
	}
	return "○"
}

// runsTitle names what the list shows; in a walk-forward it says that the
// fold's test run ends the list and how to get there, since at 80×24 the
// list shows two rows and the test run is seldom among them.
func (m *sweepModel) runsTitle() string {
	if m.start.Folds == nil {
		return fmt.Sprintf("best runs (%d)", len(m.ranked))
	}
	if m.testRun() < 0 {
		return fmt.Sprintf("best runs of fold %d's train window (%d)", m.fold, len(m.ranked))
	}
	return fmt.Sprintf("fold %d: best train runs (%d), test run (G)", m.fold, len(m.ranked)-1)
}

// runsView lists the runs in view, best first, the selected one marked.
func (m *sweepModel) runsView(th themes.Theme, w, h int) string {
	if h <= 0 {
		return ""
	}
	if len(m.ranked) == 0 {
		return th.Muted.Render("no run has finished yet")
	}
	metric := strings.ToUpper(m.obj.Metric)
	lines := []string{th.Muted.Render(fmt.Sprintf("  %6s %-13s %9s  %s", "#", "STATUS", clipText(metric, 9), "PARAMS"))}
	rows := h - 1
	first := 0
	if m.selected >= rows {
		first = m.selected - rows + 1
	}
	for i := first; i < len(m.ranked) && i < first+rows; i++ {
		r := &m.runs[m.ranked[i]]
		status, style := "✓ passed", th.OK
		if r.r.Status != sweep.RunPassed {
			status, style = "✗ "+r.r.FailureKind, th.Fail
		}
		if r.r.Phase == sweep.PhaseTest {
			// The fold's test run, after its train runs: the status
			// column says so, as the params column is the first cut
			// in the side-by-side layout.
			status = "✓ test passed"
			if r.r.Status != sweep.RunPassed {
				status = "✗ test " + r.r.FailureKind
			}
		}
		value := "—"
		if r.ok {
			value = metricText(r.value) + m.spanMark(r)
		}
		marker := "  "
		if i == m.selected {
			marker = "▸ "
		}
		line := fmt.Sprintf("%s%6d %s %9s  %s", marker, r.r.Index, style.Render(fmt.Sprintf("%-13s", clipText(status, 13))), value,
			sanitize(r.r.Params.String()))
		if i == m.selected {
			line = th.Selected.Render(ansi.Strip(fit(line, w)))
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

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

// spanMark is the mark of a run's annualised objective from a short span.
func (m *sweepModel) spanMark(r *sweepRun) string {
	if !words.IsAnnualised(m.obj.Metric) {
		return ""
	}
	if _, short, ok := words.RunAnnualSpan(r.r.Metrics); ok && short {
		return " " + words.ShortSpanMark
	}
	return ""
}

// clipText cuts s to n cells.
func clipText(s string, n int) string { return ansi.Truncate(s, n, "…") }

func (m *sweepModel) heatmapTitle() string {
	grid := m.start.Doc.Spec.Grid
	switch {
	case m.xAxis < 0:
		return "heatmap (nothing swept)"
	case m.yAxis < 0:
		return "heatmap: " + m.obj.Metric + " over " + grid[m.xAxis].Name
	}
	return fmt.Sprintf("heatmap: %s over %s (x) × %s (y)", m.obj.Metric, grid[m.xAxis].Name, grid[m.yAxis].Name)
}

// heatmapView draws the heatmap of the objective in w×h.
func (m *sweepModel) heatmapView(th themes.Theme, w, h int) string {
	if m.xAxis < 0 {
		return th.Muted.Render("the sweep sweeps no param: one run")
	}
	return m.heatmap(w, h).render(th, w, h)
}

// heatmap lays out the heatmap of the objective for w×h (the sweep sweeps
// a param).
func (m *sweepModel) heatmap(w, h int) heatmap {
	fold := -1
	if m.start.Folds != nil {
		fold = m.fold
	}
	phase := sweep.PhaseNone
	if fold >= 0 {
		phase = sweep.PhaseTrain
	}
	var held sweep.Params
	best := m.best()
	if best != nil {
		held = best.r.Params
	}
	grid := m.start.Doc.Spec.Grid
	cells := len(grid[m.xAxis].Values)
	if m.yAxis >= 0 {
		cells *= len(grid[m.yAxis].Values)
	}
	// The runs of the heatmap's fold and phase (not nil), while fewer than
	// the plane's cells; nil past that: the cells are looked up instead.
	runs := []*sweepRun{}
	for i := range m.runs {
		if k := m.runs[i].key; k.fold == fold && k.phase == phase {
			if len(runs) == cells {
				runs = nil
				break
			}
			runs = append(runs, &m.runs[i])
		}
	}
	find := func(p sweep.Params) *sweepRun {
		if i, ok := m.cells[cellKey{fold: fold, phase: phase, params: p.String()}]; ok {
			return &m.runs[i]
		}
		return nil
	}
	// A cell is at least 3 wide and the window at most h high: the
	// render's window lies inside one of w/3 × h.
	hm := buildHeatmap(grid, m.xAxis, m.yAxis, held, m.obj, runs, find, m.start.Planned, max(w/3, 1), max(h, 1))
	hm.best, hm.heldByBest = best, best != nil
	if len(m.ranked) > 0 {
		hm.selected = &m.runs[m.ranked[m.selected]]
	}
	hm.noRun, hm.notPlanned = m.emptyWords()
	return hm
}

// emptyWords says what a cell without a result is: noRun for a
// combination the sweep runs, notPlanned for one the constraint or the
// sample left out. While the sweep runs, a planned cell may still get a
// result; once it has ended it will not (a stop left it unrun). When the
// view is not told the plan, every empty cell is noRun, and an ended
// sweep's is named by what could have left it empty.
func (m *sweepModel) emptyWords() (noRun, notPlanned string) {
	spec := m.start.Doc.Spec
	why := ""
	switch {
	case spec.Constraint != nil && spec.Random != nil:
		why = " (constraint or not sampled)"
	case spec.Constraint != nil:
		why = " (constraint)"
	case spec.Random != nil:
		why = " (not sampled)"
	}
	switch {
	case m.state != sweepEnded:
		noRun = "no result yet"
	case m.doc.Status == sweep.StatusStopped:
		noRun = "not run (stopped)"
	case m.start.Planned == nil:
		noRun = "not run" + why
	default:
		noRun = "not run"
	}
	return noRun, "not in the sweep" + why
}

// efficiencyHint says what the efficiency is, in the words of docs/sweeps.md
// (the walk-forward efficiency): the view shows a number the user cannot
// otherwise read.
const efficiencyHint = "efficiency = out-of-sample ÷ in-sample return per year, mean over folds"

// testRunHint says where a fold's test run is: the folds pane cannot be
// selected, and the list shows it only once it has run.
const testRunHint = "the runs list ends with the fold's test run: G selects it, enter opens it"

// foldsPane is the walk-forward's folds, from the latest document, in w×h:
// the pane's title and its lines. The stitched out-of-sample return and
// the efficiency keep the last line whatever the height; the folds scroll
// to keep the selected one (f/F) in sight, and the title says which are
// shown; the hint on efficiency takes a line when one is left.
func (m *sweepModel) foldsPane(th themes.Theme, w, h int) (title, body string) {
	title = "walk-forward folds (windows half-open, UTC)"
	winW := 11
	for _, f := range m.start.Folds {
		winW = max(winW, ansi.StringWidth(foldWindow(f.Train)), ansi.StringWidth(foldWindow(f.Test)))
	}
	// In sample: the objective the best was picked by (unless it is the
	// return) and the return the efficiency compares.
	objective := m.doc.Spec.Metric
	if objective == "" {
		objective = sweep.DefaultMetric
	}
	objHead, objW := "", 0
	if objective != "total_return" {
		objHead = "IN " + strings.ToUpper(objective)
		objW = max(10, ansi.StringWidth(objHead)) + 1
	}
	bestW := max(w-4-2*winW-2*10-5-objW, 12)
	row := func(fold, train, test, best, inObj, in, out string) string {
		return fmt.Sprintf("%-4s %-*s %-*s %-*s%*s %10s %10s", fold, winW, train, winW, test, bestW, clipText(best, bestW), objW, inObj, in, out)
	}
	var folds []sweep.FoldResult
	if m.doc.WalkForward != nil {
		folds = m.doc.WalkForward.Folds
	}
	rows := make([]string, len(m.start.Folds))
	for k, f := range m.start.Folds {
		best, inObj, in, out := "…", "—", "—", "—"
		if k < len(folds) {
			fr := folds[k]
			if fr.BestParams != nil {
				best = fr.BestParams.String()
			}
			if fr.InSample != nil {
				inObj, in = units.Number(fr.InSample.Value), units.Percent(fr.InSample.Return)
			}
			var om struct {
				TotalReturn *float64 `json:"total_return"`
			}
			if len(fr.OutOfSample) > 0 && json.Unmarshal(fr.OutOfSample, &om) == nil && om.TotalReturn != nil {
				out = units.Percent(*om.TotalReturn)
			}
		}
		mark := " "
		if k == m.fold {
			mark = "▸" // the fold the runs and the heatmap show
		}
		if objW == 0 {
			inObj = ""
		}
		rows[k] = row(mark+fmt.Sprint(k), foldWindow(f.Train), foldWindow(f.Test), sanitize(best), inObj, in, out)
		if k == m.fold {
			rows[k] = th.Accent.Render(rows[k])
		}
	}
	summary := m.foldsSummary()
	// The column names and the summary take a line each.
	shown := min(max(h-2, 1), len(rows))
	hint := h-2-shown >= 1
	first := windowStart(len(rows), shown, m.fold)
	if shown < len(rows) {
		title = fmt.Sprintf("walk-forward folds %d–%d of %d, f/F (windows half-open, UTC)", first, first+shown-1, len(rows))
	}
	lines := []string{th.Muted.Render(row("FOLD", "TRAIN", "TEST", "BEST PARAMS", objHead, "IN RETURN", "OUT RETURN"))}
	lines = append(lines, rows[first:first+shown]...)
	if hint {
		lines = append(lines, th.Muted.Render(clipText(efficiencyHint, w)))
	} else if more := summary + " (? explains efficiency)"; ansi.StringWidth(more) <= w {
		summary = more
	}
	lines = append(lines, th.Text.Render(clipText(summary, w)))
	return title, strings.Join(lines, "\n")
}

// foldsSummary is the stitched out-of-sample return and the efficiency:
// "…" while the sweep may still give them, "—" once it has ended without.
func (m *sweepModel) foldsSummary() string {
	none := "…"
	if m.state == sweepEnded {
		none = "—"
	}
	oos, eff := "out of sample "+none, "efficiency "+none
	if wf := m.doc.WalkForward; wf != nil {
		if st := wf.OutOfSample; st != nil {
			oos = fmt.Sprintf("out of sample %s over %d folds", units.Percent(st.TotalReturn), st.Folds)
		}
		if e := wf.Efficiency; e != nil {
			eff = "efficiency " + units.Number(*e)
		} else if why := words.EfficiencyGap(wf, m.state == sweepEnded); why != "" && m.state == sweepEnded {
			eff = "efficiency — (" + why + ")"
		}
	}
	return oos + " · " + eff
}

// foldWindow writes a half-open window briefly: days alone when both ends
// are at midnight (UTC).
func foldWindow(win sweep.Window) string {
	layout := "01-02 15:04"
	if f, t := win.From.UTC(), win.To.UTC(); f.Equal(f.Truncate(24*time.Hour)) && t.Equal(t.Truncate(24*time.Hour)) {
		layout = "01-02"
	}
	return win.From.UTC().Format(layout) + "→" + win.To.UTC().Format(layout)
}

// sweepFooter is the flash message or the help bar.
func (m *sweepModel) sweepFooter(th themes.Theme) string {
	if m.flash != "" {
		return fit(th.Warn.Render(themes.LevelWarn.Glyph()+" "+sanitize(m.flash)), m.width)
	}
	km := m.keys
	keys := []key.Binding{km.Help, km.Quit, km.Enter, km.Up, km.Down, km.XParam, km.YParam, km.Swap}
	if m.start.Folds != nil {
		keys = append(keys, km.Fold)
	}
	if m.state == sweepRunning {
		keys = append(keys, km.Stop)
	}
	return fit(m.help(th).ShortHelpView(keys), m.width)
}

func (m *sweepModel) help(th themes.Theme) help.Model {
	h := help.New()
	h.Styles = help.Styles{Ellipsis: th.HelpSep, ShortKey: th.HelpKey, ShortDesc: th.HelpDesc, ShortSeparator: th.HelpSep,
		FullKey: th.HelpKey, FullDesc: th.HelpDesc, FullSeparator: th.HelpSep}
	return h
}

// sweepHelp is every key of the sweep view.
func (m *sweepModel) sweepHelp(th themes.Theme, w, h int) string {
	groups := m.keys.fullHelp()
	content := m.help(th).FullHelpView(groups)
	if lipgloss.Width(content) > w-2 {
		// Too wide for one row of columns (80 columns): two rows, as the
		// workbench's help does.
		content = m.help(th).FullHelpView(groups[:2]) + "\n\n" + m.help(th).FullHelpView(groups[2:])
	}
	if m.start.Folds != nil {
		content += "\n\n" + th.Muted.Render(testRunHint) + "\n" + th.Muted.Render(efficiencyHint)
	}
	return frame(th, "keys (? or esc to close)", content, w, h, true)
}

// heatmap is the objective over two swept params, the others held.
type heatmap struct {
	xName, yName string
	xs, ys       []any
	cells        [][]*sweepRun // [y][x] from (y0, x0), the window laid out; nil for no result
	x0, y0       int           // where the window laid out starts
	bestX, bestY int           // the best cell's position (0, 0 without one)
	held         sweep.Params  // the other params' values
	heldByBest   bool          // held are the best run's (else the first values: no best yet)
	best         *sweepRun     // the best run in view, marked ★, or nil
	selected     *sweepRun     // the run selected in the list, marked ◂, or nil
	out          [][]bool      // [y][x] as cells; the plan leaves the combination out
	planKnown    bool          // the view was told the plan
	noRun        string        // what a cell without a result is
	notPlanned   string        // what a cell the plan leaves out is
	lo, hi       float64       // the range of the values shown
	minimize     bool
	any          bool // some cell has a value
}

// buildHeatmap lays out the objective over grid[x] × grid[y] (y < 0: one
// row), the other params held at held's values (their first values when
// held lacks them). Its cells are the runs (of the heatmap's fold and
// phase) whose other params are held's, found by placing each of runs
// or, when runs is nil, by looking up each cell of the plane (find): the
// caller gives runs only when they are fewer than the cells, so that
// a million-cell plane of a sample costs its runs, a plane of 400 cells
// of a sweep of 100,000 runs its cells. The range of the values and the
// best cell are the whole plane's; the cells themselves, and whether the
// plan leaves an empty one out (planned, when not nil), are laid out in a
// window of at most maxCols × maxRows around the best cell only.
func buildHeatmap(grid sweep.Grid, x, y int, held sweep.Params, obj sweep.Objective, runs []*sweepRun,
	find func(sweep.Params) *sweepRun, planned func(sweep.Params) bool, maxCols, maxRows int) heatmap {
	hm := heatmap{xName: grid[x].Name, xs: grid[x].Values, ys: []any{nil}, minimize: obj.Minimize, lo: math.Inf(1), hi: math.Inf(-1)}
	if y >= 0 {
		hm.yName, hm.ys = grid[y].Name, grid[y].Values
	}
	base := make(sweep.Params, len(grid))
	for i, ax := range grid {
		v := ax.Values[0]
		if hv, ok := held.Get(ax.Name); ok {
			v = hv
		}
		base[i] = sweep.Param{Name: ax.Name, Value: v}
		if i != x && i != y {
			hm.held = append(hm.held, base[i])
		}
	}
	at := func(xi, yi int) sweep.Params {
		p := append(sweep.Params(nil), base...)
		p[x].Value = hm.xs[xi]
		if y >= 0 {
			p[y].Value = hm.ys[yi]
		}
		return p
	}
	type pos struct{ y, x int }
	onPlane := map[pos]*sweepRun{}
	if runs == nil {
		for yi := range hm.ys {
			for xi := range hm.xs {
				if r := find(at(xi, yi)); r != nil {
					onPlane[pos{yi, xi}] = r
				}
			}
		}
	} else {
		// Params keep their types (int64, float64, bool, string) live
		// and read back from results.jsonl: a value finds its position.
		positions := func(ax sweep.Axis) map[any]int {
			out := make(map[any]int, len(ax.Values))
			for k, v := range ax.Values {
				out[v] = k
			}
			return out
		}
		xAt, yAt := positions(grid[x]), map[any]int{}
		if y >= 0 {
			yAt = positions(grid[y])
		}
		for _, r := range runs {
			v, _ := r.r.Params.Get(grid[x].Name)
			xi, ok := xAt[v]
			if !ok {
				continue
			}
			yi := 0
			if y >= 0 {
				v, _ := r.r.Params.Get(grid[y].Name)
				if yi, ok = yAt[v]; !ok {
					continue
				}
			}
			if _, dup := onPlane[pos{yi, xi}]; !dup && at(xi, yi).String() == r.key.params {
				onPlane[pos{yi, xi}] = r
			}
		}
	}
	// The best as the list ranks it: the best value, of equal ones the
	// lower index (the run the list puts first and marks ★).
	var best pos
	var bestRun *sweepRun
	for here, r := range onPlane {
		if !r.ok {
			continue
		}
		hm.lo, hm.hi, hm.any = math.Min(hm.lo, r.value), math.Max(hm.hi, r.value), true
		if bestRun == nil {
			best, bestRun = here, r
			continue
		}
		better := r.value > bestRun.value
		if hm.minimize {
			better = r.value < bestRun.value
		}
		if better || r.value == bestRun.value && r.r.Index < bestRun.r.Index {
			best, bestRun = here, r
		}
	}
	hm.bestX, hm.bestY = best.x, best.y
	hm.x0, hm.y0 = windowStart(len(hm.xs), maxCols, best.x), windowStart(len(hm.ys), maxRows, best.y)
	nx, ny := min(len(hm.xs), maxCols), min(len(hm.ys), maxRows)
	hm.cells, hm.out, hm.planKnown = make([][]*sweepRun, ny), make([][]bool, ny), planned != nil
	for yi := range ny {
		hm.cells[yi], hm.out[yi] = make([]*sweepRun, nx), make([]bool, nx)
		for xi := range nx {
			r := onPlane[pos{hm.y0 + yi, hm.x0 + xi}]
			hm.cells[yi][xi] = r
			hm.out[yi][xi] = r == nil && planned != nil && !planned(at(hm.x0+xi, hm.y0+yi))
		}
	}
	return hm
}

// shades are the heatmap's levels, worst to best: the characters carry
// the level without colour (NO_COLOR); with colour each has its own.
var shades = []string{"░", "▒", "▓", "█"}

// shadeColours is a sequential ramp (viridis), one per shade.
var shadeColours = []string{"#3b528b", "#21918c", "#5ec962", "#fde725"}

// level returns the shade of value v, from 0 (worst) to len(shades)-1.
func (hm heatmap) level(v float64) int {
	n := len(shades)
	if hm.hi <= hm.lo {
		return n - 1
	}
	f := (v - hm.lo) / (hm.hi - hm.lo)
	if hm.minimize {
		f = 1 - f
	}
	return min(int(f*float64(n)), n-1)
}

// bound returns the value range of shade level l, as the legend says it.
func (hm heatmap) bound(l int) (from, to float64) {
	n := float64(len(shades))
	a := hm.lo + (hm.hi-hm.lo)*float64(l)/n
	b := hm.lo + (hm.hi-hm.lo)*float64(l+1)/n
	if hm.minimize {
		a = hm.hi - (hm.hi-hm.lo)*float64(l+1)/n
		b = hm.hi - (hm.hi-hm.lo)*float64(l)/n
	}
	return a, b
}

// render draws the heatmap in w×h: the y values down the left, the x
// values along the bottom, the legend, and the held params.
func (hm heatmap) render(th themes.Theme, w, h int) string {
	plain := th.Name == "plain"
	yLabels := make([]string, len(hm.ys))
	labelW := 0
	for i, v := range hm.ys {
		if v != nil {
			yLabels[i] = clipText(sanitize(valueText(v)), 8)
		}
		labelW = max(labelW, ansi.StringWidth(yLabels[i]))
	}
	// Cells as wide as the x labels (at least 3), wider when the width
	// allows, up to 8.
	cellW := 3
	for _, v := range hm.xs {
		cellW = max(cellW, min(ansi.StringWidth(valueText(v)), 6)+1)
	}
	cellW = max(cellW, min((w-labelW-1)/max(len(hm.xs), 1), 8))
	// What fits: rows below the legend lines, columns right of the labels.
	cols := max((w-labelW-1)/cellW, 1)
	// The rows left by the y title, the x labels, the legend and the
	// held params (and the line that says what is shown, when not all).
	// The values come first: when they do not fit, the shade ranges'
	// wrapped lines go (their first stays), then rows.
	// The room is reckoned with the marks of the whole window laid out
	// (the most there can be); the legend drawn names the marks of the
	// cells drawn, a window inside it, so it fits in that room.
	held := ""
	if len(hm.held) > 0 {
		what := "held at the best run's: "
		if !hm.heldByBest {
			what = "held at the first values (no best run yet): "
		}
		held = th.Muted.Render(what + sanitize(hm.held.String()))
	}
	shadeLines := hm.shadeLegend(th, plain, w)
	marks := hm.markLegend(th, w, hm.marksIn(0, 0, len(hm.cells[0]), len(hm.cells)), held)
	avail := h - 1
	if hm.yName != "" {
		avail--
	}
	for len(shadeLines) > 1 && min(len(hm.ys), avail)+len(shadeLines)+len(marks) > avail {
		shadeLines = shadeLines[:len(shadeLines)-1]
	}
	rows := min(len(hm.ys), avail-len(shadeLines)-len(marks))
	if rows < len(hm.ys) {
		rows-- // for the line that says what is shown
	}
	rows = max(rows, 1)
	// Around the best, inside the window laid out (which is at least as
	// large: buildHeatmap's bounds).
	x0 := min(max(windowStart(len(hm.xs), cols, hm.bestX), hm.x0), hm.x0+len(hm.cells[0])-min(cols, len(hm.xs)))
	y0 := min(max(windowStart(len(hm.ys), rows, hm.bestY), hm.y0), hm.y0+len(hm.cells)-min(rows, len(hm.ys)))
	marks = hm.markLegend(th, w, hm.marksIn(x0-hm.x0, y0-hm.y0, min(cols, len(hm.xs)), min(rows, len(hm.ys))), held)
	tail := append(shadeLines, marks...)
	var lines []string
	if hm.yName != "" {
		lines = append(lines, th.Muted.Render(fmt.Sprintf("%*s ↓ %s", labelW, "", clipText(sanitize(hm.yName), w-labelW-3))))
	}
	for yi := y0; yi < len(hm.ys) && yi < y0+rows; yi++ {
		var b strings.Builder
		b.WriteString(th.Muted.Render(fmt.Sprintf("%*s ", labelW, yLabels[yi])))
		for xi := x0; xi < len(hm.xs) && xi < x0+cols; xi++ {
			b.WriteString(hm.cell(th, hm.cells[yi-hm.y0][xi-hm.x0], hm.out[yi-hm.y0][xi-hm.x0], cellW, plain))
		}
		lines = append(lines, b.String())
	}
	var xl strings.Builder
	xl.WriteString(strings.Repeat(" ", labelW+1))
	for xi := x0; xi < len(hm.xs) && xi < x0+cols; xi++ {
		xl.WriteString(fmt.Sprintf("%-*s", cellW, clipText(sanitize(valueText(hm.xs[xi])), cellW-1)))
	}
	lines = append(lines, th.Muted.Render(xl.String())+th.Muted.Render("→ "+sanitize(hm.xName)))
	if shown := min(cols, len(hm.xs)) * min(rows, len(hm.ys)); shown < len(hm.xs)*len(hm.ys) {
		lines = append(lines, th.Muted.Render(fmt.Sprintf("showing %d of %d × %d, around the best", shown, len(hm.xs), len(hm.ys))))
	}
	lines = append(lines, tail...)
	return strings.Join(lines, "\n")
}

// The marks of the best run's and the selected run's cells and of the
// empty ones: glyphs, so that they read the same under NO_COLOR, and none
// of the shades.
const (
	bestMark       = "★"
	selectedMark   = "◂"
	noRunMark      = "·"
	notPlannedMark = "-"
)

// cell draws one cell: the shade of its value, ✗ for a failed run, · for
// no result (yet, or unrun), - for a combination the plan leaves out (out);
// the best run's starts with ★, the selected run's ends with ◂ in the
// selection's style.
func (hm heatmap) cell(th themes.Theme, r *sweepRun, out bool, w int, plain bool) string {
	end := " "
	if r != nil && r == hm.selected {
		end = selectedMark
	}
	var s string
	style := th.Muted
	switch {
	case r == nil && out:
		s = fmt.Sprintf("%-*s", w, notPlannedMark)
	case r == nil:
		s = fmt.Sprintf("%-*s", w, noRunMark)
	case r.r.Status != sweep.RunPassed:
		s, style = fmt.Sprintf("%-*s", w-1, "✗")+end, th.Fail
	case !r.ok:
		s = fmt.Sprintf("%-*s", w-1, "?") + end
	default:
		l := hm.level(r.value)
		s = strings.Repeat(shades[l], w-1) + end
		if r == hm.best {
			s = bestMark + strings.Repeat(shades[l], w-2) + end
		}
		style = lipgloss.NewStyle()
		if !plain {
			style = style.Foreground(lipgloss.Color(shadeColours[l]))
		}
	}
	if r != nil && r == hm.selected {
		style = th.Selected
	}
	return style.Render(s)
}

// cellMarks says which of the marks besides the shades some cells of a
// window of the heatmap have.
type cellMarks struct {
	selected bool // the selected run's cell
	noRun    bool // a planned combination without a result
	out      bool // a combination the plan leaves out
}

// marksIn returns the marks of the cells of the window of cols × rows
// whose top left cell is (x, y) in hm.cells.
func (hm heatmap) marksIn(x, y, cols, rows int) cellMarks {
	var m cellMarks
	for yi := y; yi < y+rows && yi < len(hm.cells); yi++ {
		for xi := x; xi < x+cols && xi < len(hm.cells[yi]); xi++ {
			r, out := hm.cells[yi][xi], hm.out[yi][xi]
			switch {
			case r != nil:
				m.selected = m.selected || r == hm.selected
			case out:
				m.out = true
			default:
				m.noRun = true
			}
		}
	}
	return m
}

// shadeLegend says what each shade means, in numbers, in lines of at most
// w cells.
func (hm heatmap) shadeLegend(th themes.Theme, plain bool, w int) []string {
	if !hm.any {
		return nil
	}
	var parts []string
	for l := len(shades) - 1; l >= 0; l-- {
		a, b := hm.bound(l)
		sh := shades[l]
		if !plain {
			sh = lipgloss.NewStyle().Foreground(lipgloss.Color(shadeColours[l])).Render(sh)
		}
		parts = append(parts, sh+th.Text.Render(" "+metricText(a)+"…"+metricText(b)))
	}
	return wrapParts(parts, w)
}

// markLegend says what the marks that cells have (m) mean, then held (the
// line of the held params, when not ""), in lines of at most w cells.
func (hm heatmap) markLegend(th themes.Theme, w int, m cellMarks, held string) []string {
	marks := []string{bestMark + " best"}
	if m.selected {
		marks = append(marks, selectedMark+" selected")
	}
	// Told the plan, the legend names · only when a cell has it: once a
	// sweep has run every planned combination, "· not run" would name
	// nothing on the plane and take the room of the values.
	if !hm.planKnown || m.noRun {
		marks = append(marks, noRunMark+" "+hm.noRun)
	}
	if m.out {
		marks = append(marks, notPlannedMark+" "+hm.notPlanned)
	}
	marks = append(marks, "✗ failed", "? passed without the metric")
	for i := range marks {
		marks[i] = th.Muted.Render(marks[i])
	}
	lines := wrapParts(marks, w)
	if held != "" {
		lines = append(lines, held)
	}
	return lines
}

// wrapParts joins parts with two spaces into lines of at most w cells,
// breaking between parts.
func wrapParts(parts []string, w int) []string {
	var lines []string
	line := ""
	for _, p := range parts {
		switch {
		case line == "":
			line = p
		case ansi.StringWidth(line)+2+ansi.StringWidth(p) <= w:
			line += "  " + p
		default:
			lines = append(lines, line)
			line = p
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// windowStart is the first of n items to show in size slots so that item
// at is in sight, centred where it can be.
func windowStart(n, size, at int) int {
	if n <= size {
		return 0
	}
	return min(max(at-size/2, 0), n-size)
}

// metricText writes an objective's value with four significant digits
// (a return of 0.0021 is not 0.00), with separators from 1,000 on.
func metricText(v float64) string {
	if math.Abs(v) >= 1000 || math.IsNaN(v) || math.IsInf(v, 0) {
		return units.Number(v)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// valueText writes a param value as --grid takes it.
func valueText(v any) string {
	switch v := v.(type) {
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		return v
	}
	return fmt.Sprint(v)
}
