// How the sweep view draws: progress, the ranked runs, the heatmap (laid
// out in heatmap.go, drawn by components.Heatmap) and the walk-forward's
// folds, sharing one layout at every size from 80x24 up.

package sweepview

import (
	"encoding/json"
	"fmt"
	"path/filepath"
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
	"stratbench/ui/components"
)

// View implements tea.Model.
func (m *sweepModel) View() tea.View {
	var body string
	if m.job != nil {
		body = m.job.View()
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
	if w < components.MinWidth || h < components.MinHeight+2 {
		return components.FitLines(fmt.Sprintf("%s sweep %s · terminal too small (%d×%d)", th.Title.Render("stratbench"), m.statusWord(), w, h), w, h)
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

// wideWidth is the width from which the runs and the heatmap sit side by
// side: below it the runs list takes the whole width, which its columns
// (the objective, return, drawdown, trades, win rate and one per swept
// param) need.
const wideWidth = 160

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
		if h-l.foldsH < 8 {
			l.foldsH = 0 // a body too short for them and the runs and the heatmap
		}
	}
	mainH := h - l.foldsH
	l.wide = w >= wideWidth
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

// heatSize is the size of the heatmap's pane's inside in a body of w×h.
func (m *sweepModel) heatSize(w, h int) (int, int) {
	l := m.layout(w, h)
	if l.wide {
		return w - m.runsWidth(w) - 2, l.heatH - 2
	}
	return w - 2, l.heatH - 2
}

// runsWidth is the runs pane's width beside the heatmap in the wide layout.
func (m *sweepModel) runsWidth(w int) int { return w * 11 / 20 }

// sweepBody lays the panes out in w×h.
func (m *sweepModel) sweepBody(th themes.Theme, w, h int) string {
	l := m.layout(w, h)
	foldsH := l.foldsH
	heatW, heatH := m.heatSize(w, h)
	var main string
	if l.wide {
		leftW := m.runsWidth(w)
		main = components.JoinH(components.Frame(th, m.runsTitle(), m.runsView(th, leftW-2, l.runsH-2), leftW, l.runsH, true),
			components.Frame(th, m.heatmapTitle(), m.heatmapView(th, heatW, heatH), w-leftW, l.heatH, false))
	} else {
		main = components.Frame(th, m.runsTitle(), m.runsView(th, w-2, l.runsH-2), w, l.runsH, true) + "\n" +
			components.Frame(th, m.heatmapTitle(), m.heatmapView(th, heatW, heatH), w, l.heatH, false)
	}
	if foldsH == 0 {
		return main
	}
	title, folds := m.foldsPane(th, w-2, foldsH-2)
	return main + "\n" + components.Frame(th, title, folds, w, foldsH, false)
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
	line1 := th.Title.Render("stratbench") + "  " + th.Accent.Render("sweep "+components.Sanitize(d.SweepID)) + sep +
		th.Text.Render(components.Sanitize(filepath.Base(d.Strategy.Path))) + sep + th.Muted.Render(goal) + th.Text.Render(components.Sanitize(m.obj.Metric))
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
	if r := robustnessText(th, d); r != "" && m.state == sweepEnded {
		line2 += sep + r
	}
	if m.opts.Stop == nil {
		// A sweep the view only watches: how long it took, or that it
		// runs elsewhere and q leaves it running.
		switch {
		case m.state == sweepEnded && d.DurationMS > 0:
			line2 += sep + th.Muted.Render("took ") + th.Text.Render(units.Millis(float64(d.DurationMS)))
		case m.state == sweepRunning:
			line2 += sep + th.Muted.Render("watching: q leaves it running")
		}
	}
	var line3 string
	if total > 0 {
		barW := min(max(w/3, 10), 40)
		line3 = th.Accent.UnsetBold().Render(components.Gauge(float64(done), 0, float64(total), barW)) +
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
		line3 += sep + th.Muted.Render(label) + th.OK.Render(fmt.Sprintf("#%d %s %s", b.Index, components.Sanitize(b.Params.String()), components.MetricText(b.Value)))
	}
	return strings.Join([]string{components.Fit(line1, w), components.Fit(line2, w), components.Fit(line3, w)}, "\n")
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
		return fmt.Sprintf("%-4s %-*s %-*s %-*s%*s %10s %10s", fold, winW, train, winW, test, bestW, components.Clip(best, bestW), objW, inObj, in, out)
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
		rows[k] = row(mark+fmt.Sprint(k), foldWindow(f.Train), foldWindow(f.Test), components.Sanitize(best), inObj, in, out)
		if k == m.fold {
			rows[k] = th.Accent.Render(rows[k])
		}
	}
	summary := m.foldsSummary()
	// The column names and the summary take a line each.
	shown := min(max(h-2, 1), len(rows))
	hint := h-2-shown >= 1
	first := components.WindowStart(len(rows), shown, m.fold)
	if shown < len(rows) {
		title = fmt.Sprintf("walk-forward folds %d–%d of %d, f/F (windows half-open, UTC)", first, first+shown-1, len(rows))
	}
	lines := []string{th.Muted.Render(row("FOLD", "TRAIN", "TEST", "BEST PARAMS", objHead, "IN RETURN", "OUT RETURN"))}
	lines = append(lines, rows[first:first+shown]...)
	if hint {
		lines = append(lines, th.Muted.Render(components.Clip(efficiencyHint, w)))
	} else if more := summary + " (? explains efficiency)"; ansi.StringWidth(more) <= w {
		summary = more
	}
	lines = append(lines, th.Text.Render(components.Clip(summary, w)))
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
		} else if why := wf.EfficiencyWhy(m.state == sweepEnded); why != "" && m.state == sweepEnded {
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
		return components.Fit(th.Warn.Render(themes.LevelWarn.Glyph()+" "+components.Sanitize(m.flash)), m.width)
	}
	km := m.keys
	keys := []key.Binding{km.Help, km.short.Quit, km.short.Back, km.short.Open, km.short.Select, km.short.Pan, km.short.Zoom, km.short.Axes, km.Swap}
	if m.start.Folds != nil {
		keys = append(keys, km.short.Fold)
	}
	if m.state == sweepRunning && m.opts.Stop != nil {
		keys = append(keys, km.Stop)
	}
	return components.Fit(m.help(th).ShortHelpView(keys), m.width)
}

func (m *sweepModel) help(th themes.Theme) help.Model {
	h := help.New()
	h.Styles = components.HelpStyles(th)
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
	return components.Frame(th, "keys (? or esc to close)", content, w, h, true)
}
