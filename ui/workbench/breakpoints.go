package workbench

import (
	"fmt"
	"path/filepath"
	"slices"

	tea "charm.land/bubbletea/v2"

	"stratbench/job"
	"stratbench/themes"
	"stratbench/ui/components"
)

// breakpoints are where the workbench's next runs stop, set without
// editing the file: b on a frame of the failure pane or on a line of the
// source view (v), with an optional condition asked for in the footer. They
// go to every run the workbench starts from then on (Options.Start), the
// header counts them, ● marks their lines, b on a marked line removes one
// and B removes them all.
type breakpoints struct {
	list []job.Breakpoint
}

// at returns the breakpoint on file's line, if there is one.
func (b *breakpoints) at(file string, line int) (job.Breakpoint, bool) {
	i := slices.IndexFunc(b.list, func(bp job.Breakpoint) bool { return sameFile(bp.File, file) && bp.Line == line })
	if i < 0 {
		return job.Breakpoint{}, false
	}
	return b.list[i], true
}

// snapshot returns a copy of the list, for a run.
func (b *breakpoints) snapshot() []job.Breakpoint { return slices.Clone(b.list) }

// sameFile reports whether two paths name the same file as the worker
// names it (its frames give real, absolute paths; the source view resolves
// the strategy's).
func sameFile(a, b string) bool { return filepath.Clean(a) == filepath.Clean(b) }

// breakPrompt is the footer's prompt for a new breakpoint's condition.
type breakPrompt struct {
	open  bool
	file  string
	line  int
	input lineInput
}

// toggleBreak removes the breakpoint on file's line, or asks for the
// condition of a new one there.
func (m *model) toggleBreak(file string, line int) {
	if file == "" || line < 1 {
		m.setFlash("no line to set a breakpoint on: select a frame of the strategy (failure pane) or a line (v: source)", themes.LevelWarn)
		return
	}
	if _, ok := m.breaks.at(file, line); ok {
		m.breaks.list = slices.DeleteFunc(m.breaks.list, func(bp job.Breakpoint) bool { return sameFile(bp.File, file) && bp.Line == line })
		m.setFlash(fmt.Sprintf("breakpoint at %s:%d removed: the next run goes past it", displayName(file), line), themes.LevelOK)
		return
	}
	if len(m.breaks.list) >= job.MaxBreakpoints {
		m.setFlash(fmt.Sprintf("%d breakpoints already, the most a run takes: remove one (b on its line, or B for all)", job.MaxBreakpoints), themes.LevelWarn)
		return
	}
	m.setFlash("", themes.LevelOK)
	m.prompt = breakPrompt{open: true, file: file, line: line}
	m.resize(m.width, m.height)
}

// breakKey is b outside the source view: a breakpoint on the failure
// pane's selected frame.
func (m *model) breakKey() {
	if m.focus == paneFailure {
		if fr, ok := m.view().failure.selected(); ok {
			m.toggleBreak(fr.File, fr.Line)
			return
		}
	}
	m.setFlash("b sets a breakpoint on the failure pane's selected frame (4) or on a line of the source view (v)", themes.LevelOK)
}

// clearBreaks is B: every breakpoint removed.
func (m *model) clearBreaks() {
	n := len(m.breaks.list)
	m.breaks.list = nil
	switch n {
	case 0:
		m.setFlash("no breakpoints to clear (b sets one on a line of the failure pane or of the source view)", themes.LevelOK)
	default:
		m.setFlash(plural(n, "breakpoint")+" cleared: the next run stops only at breakpoint() in the code", themes.LevelOK)
	}
}

// promptKey handles a key while the condition prompt is open: enter sets
// the breakpoint, esc cancels.
func (m *model) promptKey(msg tea.KeyPressMsg) {
	p := &m.prompt
	switch msg.String() {
	case "esc":
		p.open = false
		m.resize(m.width, m.height)
		return
	case "enter":
		p.open = false
		m.resize(m.width, m.height)
		bp := job.Breakpoint{File: p.file, Line: p.line, Cond: p.input.String()}
		if err := bp.Check(); err != nil {
			m.setFlash(err.Error(), themes.LevelFail)
			return
		}
		m.breaks.list = append(m.breaks.list, bp)
		where := fmt.Sprintf("%s:%d", displayName(bp.File), bp.Line)
		if bp.Cond != "" {
			where += " if " + bp.Cond
		}
		next := "the next run stops there (save, or r)"
		if m.state == runIdle {
			next = "r runs with it; so does the next save"
		}
		m.setFlash("breakpoint at "+where+": "+next, themes.LevelOK)
		return
	}
	p.input.update(msg)
}

// promptLine is the condition prompt, drawn in the footer.
func (m *model) promptLine(th themes.Theme) string {
	p := m.prompt
	text := th.Accent.Render(fmt.Sprintf("breakpoint at %s:%d", components.Sanitize(displayName(p.file)), p.line)) +
		th.Muted.Render(" · condition (a Python expression; enter: none, esc: cancel): ") +
		th.Text.Render(p.input.String()+"▏")
	return components.Fit(text, m.width)
}

// breaksText is the header's word on breakpoints; empty without any.
func (m *model) breaksText() string {
	switch n := len(m.breaks.list); n {
	case 0:
		return ""
	case 1:
		bp := m.breaks.list[0]
		text := fmt.Sprintf("● %s:%d", displayName(bp.File), bp.Line)
		if bp.Cond != "" {
			text += " if " + bp.Cond
		}
		return components.Sanitize(text)
	default:
		return "● " + plural(n, "breakpoint")
	}
}
