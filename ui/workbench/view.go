package workbench

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"stratbench/contract"
	"stratbench/internal/units"
	"stratbench/internal/words"
	"stratbench/job"
	"stratbench/themes"
	"stratbench/ui/components"
)

// View implements tea.Model.
func (m *model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "stratbench · " + m.statusWord()
	return v
}

// render draws the whole screen: header, body, footer.
func (m *model) render() string {
	w, h := m.width, m.height
	if w <= 0 || h <= 0 {
		return ""
	}
	th := m.theme
	if m.layout.tooSmall {
		msg := fmt.Sprintf("%s %s · terminal too small (%d×%d, need %d×%d)",
			th.Title.Render("stratbench"), m.statusWord(), w, h, components.MinWidth, components.MinHeight)
		return components.FitLines(msg, w, h)
	}
	parts := []string{m.header(th)}
	body := m.layout.body
	switch {
	case m.debugOpen():
		parts = append(parts, m.debugView(th, body.w, body.h))
	case m.showHelp:
		parts = append(parts, m.helpOverlay(th, body.w, body.h))
	case m.artifacts.state != artifactsClosed:
		parts = append(parts, m.artifactsView(th, body.w, body.h))
	case m.source.open:
		parts = append(parts, m.sourceViewText(th, body.w, body.h))
	case m.layout.tabs:
		parts = append(parts, m.tabBar(th), m.framePane(th, m.focus))
	default:
		parts = append(parts, m.grid(th))
	}
	parts = append(parts, m.footer(th))
	return strings.Join(parts, "\n")
}

// grid draws the wide layout.
func (m *model) grid(th themes.Theme) string {
	top := components.JoinH(m.framePane(th, paneHooks), m.framePane(th, paneProcs))
	mid := components.JoinH(m.framePane(th, paneLogs), m.framePane(th, m.slot))
	return strings.Join([]string{top, mid, m.framePane(th, paneJobs)}, "\n")
}

// framePane draws a pane in its frame at its place in the layout.
func (m *model) framePane(th themes.Theme, id paneID) string {
	r := m.layout.panes[id]
	title := fmt.Sprintf("%d %s", int(id)+1, id)
	switch {
	case id == paneFailure && !m.layout.tabs:
		title += " (5: results)"
	case id == paneResults && !m.layout.tabs && m.hasFailure():
		// Only when there is one to see: a passed run has none.
		title += " (4: failure)"
	case id == paneJobs && m.inspected != nil:
		title += " (esc: " + m.backTo() + ")"
	case id == paneJobs:
		title += " (• this session)"
	}
	return components.Frame(th, title, m.paneOf(id).View(th), r.w, r.h, id == m.focus)
}

// hasFailure reports whether the job in view failed or could not start:
// what the failure pane, which shares the results' place, has to show.
func (m *model) hasFailure() bool {
	f := m.view().failure
	return f.failure != nil || f.startErr != nil
}

// tabBar draws the tabbed layout's pane tabs.
func (m *model) tabBar(th themes.Theme) string {
	failed := m.view().failure.failure != nil || m.view().failure.startErr != nil
	labels := make([]string, paneCount)
	for id := range paneCount {
		label := tabLabel(id, id == m.focus, failed && id == paneFailure)
		switch {
		case id == m.focus:
			labels[id] = th.FocusTitle.Render(label)
		case failed && id == paneFailure:
			labels[id] = th.Fail.Render(label)
		default:
			labels[id] = th.PaneTitle.Render(label)
		}
	}
	return components.Fit(strings.Join(labels, " "), m.width)
}

// header draws the three header lines: what is watched, the job's state, and
// its progress or outcome.
func (m *model) header(th themes.Theme) string {
	w := m.width
	v := m.view()
	sep := th.Muted.Render(" · ")

	var line1 string
	if v.stored {
		line1 = th.Title.Render("stratbench") + "  " + th.Accent.Render("stored job "+components.Sanitize(v.id)) +
			sep + th.Muted.Render("esc: "+m.backTo())
	} else {
		items := []string{th.Accent.Render(truncLeft(m.opts.Strategy, max(w/2, 20))), m.watchState(th)}
		sandbox := "sandbox off"
		if m.opts.Sandbox || v.sandbox {
			sandbox = "sandbox on"
		}
		items = append(items, th.Muted.Render(sandbox))
		if bp := m.breaksText(); bp != "" {
			items = append(items, th.Warn.Render(bp))
		}
		if m.opts.Workspace != "" {
			items = append(items, th.Muted.Render("the bundled example"))
		}
		line1 = th.Title.Render("stratbench") + "  " + strings.Join(items, sep)
	}

	word := m.statusWord()
	line2 := m.statusBadge(th, word)
	if v.id != "" {
		line2 += "  " + th.Muted.Render("job ") + th.Text.Render(components.Sanitize(v.id))
	}
	switch {
	case v.status == job.StatusRunning && !v.started.IsZero():
		line2 += sep + th.Muted.Render("elapsed ") + th.Text.Render(units.Clock(m.now().Sub(v.started)))
	case v.report != nil:
		line2 += sep + th.Muted.Render("took ") + th.Text.Render(units.Millis(float64(v.duration.Milliseconds())))
	}
	if in := inputsText(v, m.fromSweep); in != "" {
		line2 += sep + th.Muted.Render(in)
	}
	return strings.Join([]string{components.Fit(line1, w), components.Fit(line2, w), components.Fit(m.headerDetail(th, v, word), w)}, "\n")
}

// watchState is the header's word on watching.
func (m *model) watchState(th themes.Theme) string {
	switch {
	case m.fileMissing:
		return th.Warn.Render(themes.LevelWarn.Glyph() + " waiting for " + displayName(m.opts.Strategy))
	case m.watchWarn != "":
		return th.Warn.Render(themes.LevelWarn.Glyph() + " watching: " + m.watchWarn)
	case m.opts.Changes != nil:
		text := "watching"
		if n := m.watched.Modules; n > 0 {
			text += " + " + plural(n, "module")
		}
		for _, in := range m.watched.Inputs {
			text += " + " + components.Sanitize(filepath.Base(in))
		}
		if m.cause != "" {
			text += " (ran for " + components.Sanitize(m.cause) + ")"
		}
		return th.OK.Render(text)
	}
	return th.Muted.Render("not watching")
}

// statusBadge renders the status word with its glyph.
func (m *model) statusBadge(th themes.Theme, word string) string {
	style := th.Muted
	switch word {
	case "PASSED":
		style = th.OK
	case "FAILED", "ERROR":
		style = th.Fail
	case "STOPPED", "STOPPING", "DEBUGGING":
		style = th.Warn
	case "RUNNING", "STARTING":
		style = th.Accent
	}
	return style.Render(words.Badge(word))
}

// headerDetail is the third header line: progress while running, the
// outcome afterwards, or what the workbench waits for.
func (m *model) headerDetail(th themes.Theme, v *jobView, word string) string {
	sep := th.Muted.Render(" · ")
	switch word {
	case "DEBUGGING":
		return m.debugDetail(th, v)
	case "STOPPING":
		text := "stopping: on_finish runs"
		switch {
		case m.then == thenQuit:
			text += ", then the workbench quits (q again: quit now)"
		case m.then == thenRestart:
			text += ", then a new run starts (s again: kill it now)"
		default:
			text += " (s again: kill it now)"
		}
		return th.Warn.Render(text)
	case "RUNNING", "STARTING":
		return m.progressLine(th, v)
	case "WAITING":
		return th.Warn.Render("waiting for " + displayName(m.opts.Strategy) + ": save it to start a run")
	case "ERROR":
		return th.Fail.Render("cannot start: " + firstLine(m.startErr.Error()))
	}
	r := v.report
	if r == nil {
		return th.Muted.Render("no run yet")
	}
	switch r.Status {
	case job.StatusFailed:
		if f := r.Failure; f != nil {
			return th.Fail.Render(fmt.Sprintf("%s %s: %s", themes.LevelFail.Glyph(), words.Where(f), components.Sanitize(words.Summary(f))))
		}
	case job.StatusStopped:
		text := "stopped after " + units.Millis(float64(v.duration.Milliseconds()))
		if v.progress.Done > 0 {
			text += fmt.Sprintf(", at event %s of %s", units.Count(v.progress.Done), units.Count(r.Data.Events))
		}
		return th.Warn.Render(text)
	}
	parts := []string{th.OK.Render(fmt.Sprintf("passed: %s events", units.Count(r.Data.Events)))}
	if ret := totalReturn(r.Metrics); ret != "" {
		parts = append(parts, th.Muted.Render("return ")+th.Text.Render(ret))
	}
	for _, mt := range formatMetrics(r.Metrics) {
		if mt.name == "sharpe" || mt.name == "trades" {
			parts = append(parts, th.Muted.Render(mt.name+" ")+th.Text.Render(mt.value))
		}
	}
	return strings.Join(parts, sep)
}

// progressLine is the running job's progress bar with bars done, rate and ETA.
func (m *model) progressLine(th themes.Theme, v *jobView) string {
	p := v.progress
	if p.Total <= 0 {
		return th.Muted.Render("starting the worker…")
	}
	barW := min(max(m.width/3, 10), 40)
	frac := float64(p.Done) / float64(p.Total)
	bar := th.Accent.UnsetBold().Render(components.Gauge(float64(p.Done), 0, float64(p.Total), barW))
	text := fmt.Sprintf(" %3.0f%%  %s/%s bars", frac*100, units.Count(p.Done), units.Count(p.Total))
	if p.BarsPerSec > 0 {
		text += fmt.Sprintf(" · %s bars/s", units.Count(int(p.BarsPerSec+0.5)))
	}
	if eta := words.ETA(p); eta != "" {
		text += " · ETA " + eta
	}
	return bar + th.Text.Render(text)
}

// footer is the breakpoint's condition prompt, the flash message, or the
// help bar: global keys then the focused pane's (an overlay's own keys
// while one is open).
func (m *model) footer(th themes.Theme) string {
	if m.prompt.open {
		return m.promptLine(th)
	}
	if m.flash.text != "" {
		st := th.Style(m.flash.level)
		text := m.flash.level.Glyph() + " " + components.Sanitize(m.flash.text)
		rows := m.height - headerHeight - m.layout.body.h
		lines := strings.Split(ansi.Wrap(text, m.width, ""), "\n")
		if len(lines) > rows {
			lines = lines[:rows]
		}
		for i, l := range lines {
			lines[i] = components.Fit(st.Render(l), m.width)
		}
		return strings.Join(lines, "\n")
	}
	h := m.themedHelp(th)
	paneKeys := m.paneOf(m.focus).ShortHelp(m.keys)
	switch {
	case m.debugOpen():
		return components.Fit(h.ShortHelpView(m.debugHelp()), m.width)
	case m.artifacts.state != artifactsClosed:
		return components.Fit(h.ShortHelpView(m.artifactsHelp()), m.width)
	case m.source.open:
		return components.Fit(h.ShortHelpView(m.sourceHelp()), m.width)
	}
	if m.inspected != nil {
		paneKeys = append([]key.Binding{m.keys.Back}, paneKeys...)
	}
	return components.Fit(h.ShortHelpView(m.keys.shortHelp(paneKeys)), m.width)
}

// themedHelp returns the help renderer in the theme's styles.
func (m *model) themedHelp(th themes.Theme) help.Model {
	h := m.help
	h.Styles = components.HelpStyles(th)
	return h
}

// helpOverlay draws the full key help in a frame centred in the body.
func (m *model) helpOverlay(th themes.Theme, w, h int) string {
	hm := m.themedHelp(th)
	hm.SetWidth(0)
	groups := m.keys.fullHelp()
	content := hm.FullHelpView(groups)
	if lipgloss.Width(content)+4 > w {
		// Too wide for one row of columns: two rows.
		half := (len(groups) + 1) / 2
		content = hm.FullHelpView(groups[:half]) + "\n\n" + hm.FullHelpView(groups[half:])
	}
	bw := min(ansi.StringWidth(strings.SplitN(content, "\n", 2)[0])+4, w)
	for _, l := range strings.Split(content, "\n") {
		bw = min(max(bw, ansi.StringWidth(l)+4), w)
	}
	bh := min(strings.Count(content, "\n")+3, h)
	box := components.Frame(th, "Keys · ? or esc closes", content, bw, bh, true)
	top := max((h-bh)/2, 0)
	left := strings.Repeat(" ", max((w-bw)/2, 0))
	lines := make([]string, h)
	boxLines := strings.Split(box, "\n")
	for i := range lines {
		if j := i - top; j >= 0 && j < len(boxLines) {
			lines[i] = components.Fit(left+boxLines[j], w)
		} else {
			lines[i] = strings.Repeat(" ", w)
		}
	}
	return strings.Join(lines, "\n")
}

// inputsText says what a job runs on, shortly: the data, the window when it
// is not all the data, the params, and the market settings that are not
// the defaults. Empty before the job has started.
// A sweep's run puts its params first: they are what tells it from the
// sweep's other runs, and they would be cut at 80 columns after the rest.
func inputsText(v *jobView, paramsFirst bool) string {
	if v.data.Source == "" {
		return ""
	}
	data := []string{"data " + components.Sanitize(filepath.Base(v.data.Source))}
	if w := v.data.Window; w != "" && w != "-..-" {
		data = append(data, components.Sanitize(words.Window(w)))
	}
	var params []string
	if len(v.params) > 0 {
		keys := make([]string, 0, len(v.params))
		for k := range v.params {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		ps := make([]string, len(keys))
		for i, k := range keys {
			ps[i] = fmt.Sprintf("%s=%v", k, v.params[k])
		}
		params = []string{components.Sanitize(strings.Join(ps, " "))}
	}
	parts := append(data, params...)
	if paramsFirst {
		parts = append(params, data...)
	}
	mk := v.market
	if mk != (contract.MarketInfo{}) {
		def := defaultMarket()
		if mk.Cash != def.Cash {
			parts = append(parts, "cash "+units.Money(mk.Cash))
		}
		if mk.FeeBps != def.FeeBps {
			parts = append(parts, "fees "+units.Number(mk.FeeBps)+" bps")
		}
		if mk.SlippageBps != def.SlippageBps {
			parts = append(parts, "slippage "+units.Number(mk.SlippageBps)+" bps")
		}
		if mk.AllowShort != def.AllowShort {
			parts = append(parts, "short selling on")
		}
	}
	return strings.Join(parts, " · ")
}

// backTo is where esc goes from a stored job.
func (m *model) backTo() string {
	if m.fromSweep {
		return "back to the sweep"
	}
	return "back to the live run"
}

// defaultMarket is the market settings a run has without flags (the
// backtest's defaults); the header names only those that differ.
func defaultMarket() contract.MarketInfo { return contract.MarketInfo{Cash: 100_000} }

// plural writes n with a noun: "1 module", "3 modules".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return units.Count(n) + " " + noun + "s"
}

// displayName is the file name the user knows the strategy by.
func displayName(path string) string {
	if path == "" {
		return "strategy.py"
	}
	return filepath.Base(path)
}

// truncLeft keeps the end of s, which matters most in a path.
func truncLeft(s string, w int) string {
	s = components.Sanitize(s)
	if ansi.StringWidth(s) <= w {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && ansi.StringWidth(string(r))+1 > w {
		r = r[1:]
	}
	return "…" + string(r)
}

// firstLine returns the first line of s, made safe to draw.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return components.Sanitize(s)
}
