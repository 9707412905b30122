package workbench

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"stratbench/contract"
	"stratbench/internal/words"
	"stratbench/job"
	"stratbench/themes"
	"stratbench/ui/components"
)

// failurePane explains why a run failed: kind, hook, message, event, and the
// traceback with the strategy's own frames marked and their source shown.
// One of the strategy's frames is selected, the failing one unless [ or ]
// chose another: e opens the editor there, b sets a breakpoint there for
// the next runs, v shows its file.
type failurePane struct {
	scrollPane
	failure  *contract.Failure
	startErr error      // the run could not start (a usage error)
	status   job.Status // the job's status, for the no-failure text
	strategy string     // the strategy path, to recognise its frames in a raw traceback
	breaks   *breakpoints
	sel      int               // the selected frame's index in failure.Frames, for failure selFor
	selFor   *contract.Failure // the failure sel was chosen in; another one selects its failing frame
}

func newFailurePane(breaks *breakpoints) *failurePane {
	p := &failurePane{breaks: breaks}
	p.scrollPane.lines = p.lines
	return p
}

// ShortHelp implements pane: e opens the selected frame's line, b sets a
// breakpoint there, [ and ] select another frame of the strategy.
func (p *failurePane) ShortHelp(km keyMap) []key.Binding {
	keys := []key.Binding{km.Edit, km.Breakpoint}
	if len(p.userFrames()) > 1 {
		keys = append(keys, km.Frames)
	}
	return append(keys, scrollKeys(km)...)
}

// Update implements pane: [ and ] move the selection among the strategy's
// frames; the rest scrolls.
func (p *failurePane) Update(msg tea.Msg, km keyMap) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		step := 0
		switch {
		case key.Matches(k, km.PrevFrame):
			step = -1
		case key.Matches(k, km.NextFrame):
			step = 1
		}
		if step != 0 {
			if user := p.userFrames(); len(user) > 0 {
				at := max(slices.Index(user, p.selIndex()), 0)
				p.sel, p.selFor = user[min(max(at+step, 0), len(user)-1)], p.failure
			}
			return nil
		}
	}
	return p.scrollPane.Update(msg, km)
}

// userFrames returns the indexes of the strategy's own frames.
func (p *failurePane) userFrames() []int {
	var out []int
	if p.failure == nil {
		return nil
	}
	for i, fr := range p.failure.Frames {
		if fr.User && fr.File != "" {
			out = append(out, i)
		}
	}
	return out
}

// selIndex is the selected frame's index, -1 when there is none.
func (p *failurePane) selIndex() int {
	if p.failure == nil {
		return -1
	}
	if p.selFor == p.failure && p.sel >= 0 && p.sel < len(p.failure.Frames) {
		return p.sel
	}
	user := p.userFrames()
	if len(user) == 0 {
		return -1
	}
	return user[len(user)-1] // the failing line: the last of the strategy's frames
}

// selected returns the selected frame of the strategy.
func (p *failurePane) selected() (contract.Frame, bool) {
	i := p.selIndex()
	if i < 0 {
		return contract.Frame{}, false
	}
	return p.failure.Frames[i], true
}

func (p *failurePane) lines(th themes.Theme) []string {
	fail := themes.LevelFail
	switch {
	case p.startErr != nil:
		out := []string{th.Fail.Render(fail.Glyph() + " the run could not start")}
		for _, l := range strings.Split(p.startErr.Error(), "\n") {
			out = append(out, components.Sanitize(l))
		}
		return out
	case p.failure == nil:
		switch p.status {
		case job.StatusPassed:
			return []string{th.OK.Render(themes.LevelOK.Glyph() + " no failure: the run passed")}
		case job.StatusStopped:
			return []string{th.Warn.Render(themes.LevelWarn.Glyph() + " no failure: the run was stopped")}
		case job.StatusRunning:
			return []string{th.Muted.Render("no failure so far")}
		}
		return []string{th.Muted.Render("no run yet")}
	}
	f := p.failure
	out := p.wrap(th.Fail, fail.Glyph()+" "+words.Headline(f), "  ")
	if ev := words.Event(f); ev != "" {
		out = append(out, p.wrap(th.Muted, components.Sanitize(ev), "  ")...)
	}
	// The message in full, wrapped: the pane is where it is read. When the
	// traceback ends with it (a syntax error's does), the summary line
	// alone, so that it is not shown twice.
	msg := strings.TrimRight(f.Message, "\n")
	if words.MessageInTraceback(f) {
		msg = words.Summary(f)
	}
	for _, l := range strings.Split(msg, "\n") {
		out = append(out, p.wrap(th.Text, components.Sanitize(l), "  ")...)
	}
	switch {
	case len(f.Frames) > 0:
		out = append(out, "", th.Muted.Render("Traceback (most recent call last):"))
		out = append(out, p.frames(th, f.Frames)...)
	case f.Traceback != "":
		out = append(out, "")
		out = append(out, p.rawTraceback(th, f.Traceback)...)
	}
	if fr, ok := p.selected(); ok {
		hint := fmt.Sprintf("e: edit %s:%d · b: breakpoint there", filepath.Base(fr.File), fr.Line)
		if p.breaks != nil {
			if _, set := p.breaks.at(fr.File, fr.Line); set {
				hint = fmt.Sprintf("e: edit %s:%d · b: remove its breakpoint", filepath.Base(fr.File), fr.Line)
			}
		}
		if len(p.userFrames()) > 1 {
			hint += " · [/]: another frame"
		}
		out = append(out, "", th.Muted.Render(components.Sanitize(hint)))
	}
	return out
}

// wrap renders a line of text in style, wrapped at the pane's width; the
// lines after the first are indented by hang.
func (p *failurePane) wrap(style lipgloss.Style, text, hang string) []string {
	if p.w <= len(hang)+8 || ansi.StringWidth(text) <= p.w {
		return []string{style.Render(text)}
	}
	lines := strings.Split(ansi.Wrap(text, p.w, ""), "\n")
	out := []string{style.Render(lines[0])}
	if len(lines) > 1 {
		rest := strings.Join(lines[1:], " ")
		for _, l := range strings.Split(ansi.Wrap(rest, p.w-len(hang), ""), "\n") {
			out = append(out, hang+style.Render(l))
		}
	}
	return out
}

// frames renders structured frames: the strategy's own are marked ▶ and
// highlighted (the selected one in the selection's style, with ◂ when
// there are several), other frames are muted; ● follows a frame whose line
// has a breakpoint; every frame's source line follows it.
func (p *failurePane) frames(th themes.Theme, frames []contract.Frame) []string {
	var out []string
	sel, several := p.selIndex(), len(p.userFrames()) > 1
	for i, fr := range frames {
		loc := fmt.Sprintf("%s:%d in %s", components.Sanitize(fr.File), fr.Line, components.Sanitize(fr.Function))
		if p.breaks != nil {
			if _, ok := p.breaks.at(fr.File, fr.Line); ok {
				loc += " ●"
			}
		}
		switch {
		case fr.User && i == sel && several:
			out = append(out, th.Selected.Render("▶ "+loc+" ◂"))
		case fr.User:
			out = append(out, th.Marked.Render("▶ "+loc))
		default:
			out = append(out, th.Muted.Render("  "+loc))
		}
		if src := strings.TrimSpace(fr.Source); src != "" {
			style := th.Muted
			if fr.User {
				style = th.Text
			}
			out = append(out, "    "+style.Render("│ "+components.Sanitize(src)))
		}
	}
	return out
}

// rawTraceback renders a traceback given only as text: the frame lines of the
// strategy file and the source line after each are marked.
func (p *failurePane) rawTraceback(th themes.Theme, tb string) []string {
	var out []string
	base := filepath.Base(p.strategy)
	markNext := false
	for _, l := range strings.Split(strings.TrimRight(tb, "\n"), "\n") {
		l = components.Sanitize(l)
		trimmed := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(trimmed, "File ") && base != "." && strings.Contains(trimmed, base+`"`):
			out = append(out, th.Marked.Render("▶ "+trimmed))
			markNext = true
		case markNext:
			out = append(out, "    "+th.Text.Render("│ "+trimmed))
			markNext = false
		default:
			out = append(out, "  "+th.Muted.Render(l))
		}
	}
	return out
}
