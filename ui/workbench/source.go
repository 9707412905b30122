package workbench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"stratbench/internal/units"
	"stratbench/themes"
	"stratbench/ui/components"
)

// The source view (v) shows a file of the strategy, over the panes, with a
// line cursor: at the failure pane's selected frame when there is one,
// else at the top of the strategy. b on the cursor's line sets a
// breakpoint there for the next runs (or removes it), e opens the editor
// there. It reads the file as it is on disk now.

// sourceView is the overlay's state.
type sourceView struct {
	open   bool
	file   string   // the file shown, as breakpoints name it
	lines  []string // its lines, made safe to draw
	err    error    // why it could not be read
	cursor int      // the line under the cursor, 0-based
	top    int      // the first line shown
	rows   int      // lines that fit, as last drawn
}

// Bounds of what the source view reads: a strategy is a few hundred lines.
const (
	maxSourceBytes = 4 << 20
	maxSourceLines = 100_000
)

// sourceLoadedMsg carries a file read for the source view.
type sourceLoadedMsg struct {
	file  string
	lines []string
	err   error
	line  int // the line to put the cursor on, 1-based
}

// sourceKeys are the overlay's own keys.
type sourceKeys struct {
	Break, Edit, Close key.Binding
}

func newSourceKeys() sourceKeys {
	return sourceKeys{
		Break: key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "breakpoint on this line")),
		Edit:  key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "edit here")),
		Close: key.NewBinding(key.WithKeys("esc", "v"), key.WithHelp("esc/v", "close")),
	}
}

// openSource opens the source view at the failure pane's selected frame,
// or the strategy's first line; the file is read off the update loop.
func (m *model) openSource() tea.Cmd {
	file, line := m.opts.Strategy, 1
	if fr, ok := m.view().failure.selected(); ok {
		file, line = fr.File, fr.Line
	}
	m.source = sourceView{open: true, file: file}
	return func() tea.Msg {
		real := file
		if r, err := filepath.EvalSymlinks(file); err == nil {
			real = r // as the worker names the strategy's frames
		}
		lines, err := readSource(real)
		return sourceLoadedMsg{file: real, lines: lines, err: err, line: line}
	}
}

// readSource reads a file's lines, bounded, made safe to draw.
func readSource(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	var lines []string
	sc := bufio.NewScanner(io.LimitReader(f, maxSourceBytes))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() && len(lines) < maxSourceLines {
		lines = append(lines, components.Sanitize(sc.Text()))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return lines, nil
}

// sourceLoaded shows a file read.
func (m *model) sourceLoaded(msg sourceLoadedMsg) {
	if !m.source.open {
		return
	}
	m.source.file, m.source.lines, m.source.err = msg.file, msg.lines, msg.err
	m.source.cursor = min(max(msg.line-1, 0), max(len(msg.lines)-1, 0))
	m.source.top = -1 // centred on the cursor at the next draw
}

// sourceKey handles a key while the source view is open.
func (m *model) sourceKey(msg tea.KeyPressMsg) tea.Cmd {
	s := &m.source
	km, sk := m.keys, newSourceKeys()
	page := max(s.rows-1, 1)
	switch {
	case key.Matches(msg, km.Quit):
		return m.requestQuit()
	case key.Matches(msg, sk.Close):
		m.source = sourceView{}
	case key.Matches(msg, sk.Break) && km.Breakpoint.Enabled():
		if s.err == nil && len(s.lines) > 0 {
			m.toggleBreak(s.file, s.cursor+1)
		}
	case key.Matches(msg, km.ClearBreaks) && km.ClearBreaks.Enabled():
		m.clearBreaks()
	case key.Matches(msg, sk.Edit) && km.Edit.Enabled():
		return m.editAt(s.file, s.cursor+1)
	case key.Matches(msg, km.Up):
		s.cursor--
	case key.Matches(msg, km.Down):
		s.cursor++
	case key.Matches(msg, km.PageUp):
		s.cursor -= page
	case key.Matches(msg, km.PageDown):
		s.cursor += page
	case key.Matches(msg, km.Top):
		s.cursor = 0
	case key.Matches(msg, km.Bottom):
		s.cursor = len(s.lines) - 1
	}
	s.cursor = min(max(s.cursor, 0), max(len(s.lines)-1, 0))
	return nil
}

// sourceHelp is the footer while the source view is open.
func (m *model) sourceHelp() []key.Binding {
	sk := newSourceKeys()
	out := []key.Binding{m.keys.Up, m.keys.Down}
	if m.keys.Breakpoint.Enabled() {
		out = append(out, sk.Break, m.keys.ClearBreaks)
	}
	if m.keys.Edit.Enabled() {
		out = append(out, sk.Edit)
	}
	return append(out, sk.Close, m.keys.Quit)
}

// sourceViewText draws the source view in a w×h frame.
func (m *model) sourceViewText(th themes.Theme, w, h int) string {
	s := &m.source
	title := "Source · " + components.Sanitize(displayName(s.file))
	var body []string
	rows := max(h-3, 1)
	switch {
	case s.lines == nil && s.err == nil:
		body = []string{th.Muted.Render("reading " + components.Sanitize(s.file) + "…")}
	case s.err != nil:
		body = []string{th.Fail.Render(themes.LevelFail.Glyph() + " " + components.Sanitize(s.err.Error()))}
	default:
		s.rows = rows
		if s.top < 0 || s.cursor < s.top || s.cursor >= s.top+rows {
			s.top = components.WindowStart(len(s.lines), rows, s.cursor)
		}
		num := len(units.Count(len(s.lines)))
		for i := s.top; i < min(s.top+rows, len(s.lines)); i++ {
			_, marked := m.breaks.at(s.file, i+1)
			body = append(body, sourceLine(th, marked, i+1, num, s.lines[i], i == s.cursor, false, w-2))
		}
		for len(body) < rows {
			body = append(body, "")
		}
		where := fmt.Sprintf("line %s of %s", units.Count(s.cursor+1), units.Count(len(s.lines)))
		if bp, ok := m.breaks.at(s.file, s.cursor+1); ok {
			where += " · ● breakpoint"
			if bp.Cond != "" {
				where += " if " + components.Sanitize(bp.Cond)
			}
		}
		body = append(body, th.Muted.Render(where))
	}
	return components.Frame(th, title, strings.Join(body, "\n"), w, h, true)
}

// sourceLine renders line n of a file, numbered in width digits: ● where
// a breakpoint is set (marked), → on the line a stop is at (current), the
// cursor's line marked › and selected; w is the width it is drawn in.
func sourceLine(th themes.Theme, marked bool, n, width int, text string, cursor, current bool, w int) string {
	mark := " "
	if marked {
		mark = "●"
	}
	arrow := " "
	switch {
	case current:
		arrow = "→"
	case cursor:
		arrow = "›" // the cursor, seen without colour too
	}
	line := fmt.Sprintf("%s%s %*d │ %s", mark, arrow, width, n, strings.ReplaceAll(text, "\t", "    "))
	switch {
	case cursor:
		return th.Selected.Render(components.Fit(line, w))
	case current:
		return th.Accent.Render(line)
	case mark == "●":
		return th.Warn.Render(line)
	}
	return th.Text.Render(line)
}
