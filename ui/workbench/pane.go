package workbench

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"stratbench/themes"
)

// paneID names a pane; its value is its position in focus order and its
// digit key minus one.
type paneID int

const (
	paneHooks paneID = iota
	paneProcs
	paneLogs
	paneFailure
	paneResults
	paneJobs
	paneCount
)

// String returns the pane's title.
func (p paneID) String() string {
	switch p {
	case paneHooks:
		return "Hooks"
	case paneProcs:
		return "Process tree"
	case paneLogs:
		return "Logs"
	case paneFailure:
		return "Failure"
	case paneResults:
		return "Results"
	case paneJobs:
		return "Jobs"
	}
	return "?"
}

// shortName is the pane's name in the narrow layout's tab bar.
func (p paneID) shortName() string {
	if p == paneProcs {
		return "Procs"
	}
	return p.String()
}

// pane is one component of the workbench. The root model owns the data flow:
// it feeds job data to panes through their own methods and routes keys and
// mouse wheel scrolls to the focused pane through Update.
type pane interface {
	// SetSize sets the size of the pane's content, inside its frame.
	SetSize(width, height int)
	// Update handles a key or scroll message while the pane has focus.
	Update(msg tea.Msg, km keyMap) tea.Cmd
	// View renders the content, at most the size set.
	View(th themes.Theme) string
	// ShortHelp lists the pane's own keys for the help bar.
	ShortHelp(km keyMap) []key.Binding
}

// scrollMsg scrolls the focused pane by a number of lines (negative is up);
// the root model sends it for mouse wheel events.
type scrollMsg struct{ lines int }

// scrollPane is the one pane of scrolling lines: the hooks, process tree,
// failure and results panes are each a scrollPane over their own lines
// (they embed it and set lines to their method).
type scrollPane struct {
	lines  func(th themes.Theme) []string // the content at the current size
	scroll scroller
	w, h   int
}

// SetSize implements pane.
func (p *scrollPane) SetSize(w, h int) { p.w, p.h = w, h }

// Update implements pane: the scroll keys and the mouse wheel.
func (p *scrollPane) Update(msg tea.Msg, km keyMap) tea.Cmd {
	p.scroll.handle(msg, km, len(p.lines(themes.Plain())), p.h)
	return nil
}

// ShortHelp implements pane.
func (p *scrollPane) ShortHelp(km keyMap) []key.Binding { return scrollKeys(km) }

// View implements pane. Content cut off below or above says so in its
// last or first row: "↓ 18 more (j/↓)".
func (p *scrollPane) View(th themes.Theme) string {
	lines := p.lines(th)
	view := strings.Split(p.scroll.window(lines, p.h), "\n")
	if len(lines) <= p.h || p.h < 3 {
		return strings.Join(view, "\n")
	}
	if below := len(lines) - (p.scroll.offset + p.h); below > 0 {
		view[len(view)-1] = th.Muted.Render(fmt.Sprintf("↓ %d more (j/↓ scrolls)", below+1))
	}
	if above := p.scroll.offset; above > 0 {
		view[0] = th.Muted.Render(fmt.Sprintf("↑ %d above (k/↑)", above+1))
	}
	return strings.Join(view, "\n")
}

// scroller is the scroll state of a pane whose content is a list of lines.
type scroller struct {
	offset int
}

// handle applies a scroll key or message given the content's line count and
// the visible height; it reports whether msg was a scroll action.
func (s *scroller) handle(msg tea.Msg, km keyMap, total, height int) bool {
	page := max(height-1, 1)
	switch msg := msg.(type) {
	case scrollMsg:
		s.offset += msg.lines
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, km.Up):
			s.offset--
		case key.Matches(msg, km.Down):
			s.offset++
		case key.Matches(msg, km.PageUp):
			s.offset -= page
		case key.Matches(msg, km.PageDown):
			s.offset += page
		case key.Matches(msg, km.Top):
			s.offset = 0
		case key.Matches(msg, km.Bottom):
			s.offset = total
		default:
			return false
		}
	default:
		return false
	}
	s.offset = min(max(s.offset, 0), max(total-height, 0))
	return true
}

// window returns the visible lines and keeps the offset inside the content.
func (s *scroller) window(lines []string, height int) string {
	s.offset = min(max(s.offset, 0), max(len(lines)-height, 0))
	end := min(s.offset+height, len(lines))
	return strings.Join(lines[s.offset:end], "\n")
}

// scrollKeys are the keys every scrolling pane offers.
func scrollKeys(km keyMap) []key.Binding {
	return []key.Binding{km.Up, km.Down}
}
