package workbench

import (
	"fmt"
	"path/filepath"
	"strings"

	"charm.land/bubbles/v2/key"
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
type failurePane struct {
	scrollPane
	failure  *contract.Failure
	startErr error      // the run could not start (a usage error)
	status   job.Status // the job's status, for the no-failure text
	strategy string     // the strategy path, to recognise its frames in a raw traceback
}

func newFailurePane() *failurePane {
	p := &failurePane{}
	p.scrollPane.lines = p.lines
	return p
}

// ShortHelp implements pane: e opens the failing line.
func (p *failurePane) ShortHelp(km keyMap) []key.Binding {
	return append([]key.Binding{km.Edit}, scrollKeys(km)...)
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
	if fr, ok := failingFrame(f); ok {
		out = append(out, "", th.Muted.Render(fmt.Sprintf("e: edit %s:%d", filepath.Base(fr.File), fr.Line)))
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
// highlighted, other frames are muted; every frame's source line follows it.
func (p *failurePane) frames(th themes.Theme, frames []contract.Frame) []string {
	var out []string
	for _, fr := range frames {
		loc := fmt.Sprintf("%s:%d in %s", components.Sanitize(fr.File), fr.Line, components.Sanitize(fr.Function))
		if fr.User {
			out = append(out, th.Marked.Render("▶ "+loc))
		} else {
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

// failingFrame returns the failing line of the strategy: the last frame of
// the strategy's own files.
func failingFrame(f *contract.Failure) (contract.Frame, bool) {
	if f == nil {
		return contract.Frame{}, false
	}
	for i := len(f.Frames) - 1; i >= 0; i-- {
		if f.Frames[i].User && f.Frames[i].File != "" {
			return f.Frames[i], true
		}
	}
	return contract.Frame{}, false
}
