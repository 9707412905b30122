package workbench

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"stratbench/internal/units"
	"stratbench/job"
	"stratbench/themes"
	"stratbench/ui/components"
)

// The debug pane opens over the panes when the live run stops at the
// debugger's prompt (breakpoint() in the strategy, a breakpoint set with b,
// or a step): the source around the line, the stack, the locals, what the
// debugger printed, and a prompt that takes pdb's commands. It has the
// keyboard while it is open (ctrl+c still quits); it closes when the run
// goes on (c, q) or ends. While it waits for a command the engine pauses
// the hook's time limit (job.DebugConsole.DebugWaiting): the workbench
// says so when the prompt is on screen, and the command sent ends the
// pause.

// debugPane is the debugger of the live run.
type debugPane struct {
	stop    job.DebugStop // the last prompt
	waiting bool          // at the prompt: a command may be sent
	running string        // the command the worker runs (a step), while it does
	lines   []string      // the session's transcript, made safe to draw
	scroll  int           // lines scrolled up from its end
	input   lineInput
	history []string // commands sent, oldest first
	recall  int      // the history entry shown (len(history): none)
	err     string   // why the last command was not sent
}

// Bounds of what the pane keeps.
const (
	maxDebugLines   = 2000
	maxDebugHistory = 100
)

func newDebugPane() *debugPane { return &debugPane{} }

// stopped takes a prompt of the worker's.
func (d *debugPane) stopped(e job.DebugStop) {
	d.stop, d.waiting, d.running, d.err, d.scroll = e, true, "", "", 0
	out := strings.TrimRight(e.Output, "\n")
	if out != "" {
		for _, l := range strings.Split(out, "\n") {
			d.add(components.Sanitize(l))
		}
	}
}

// add appends a line to the transcript, keeping the last maxDebugLines.
func (d *debugPane) add(line string) {
	if len(d.lines) >= maxDebugLines {
		d.lines = slices.Delete(d.lines, 0, len(d.lines)-maxDebugLines+1)
	}
	d.lines = append(d.lines, line)
}

// take returns the command typed, adding it to the transcript and the
// history; the pane waits for the worker then.
func (d *debugPane) take() string {
	line := d.input.String()
	d.add("(Pdb) " + components.Sanitize(line))
	if line != "" && (len(d.history) == 0 || d.history[len(d.history)-1] != line) {
		d.history = append(d.history, line)
		if len(d.history) > maxDebugHistory {
			d.history = d.history[1:]
		}
	}
	d.recall = len(d.history)
	d.input = lineInput{}
	d.waiting, d.running, d.scroll = false, line, 0
	return line
}

// debugKeys are the pane's own keys.
type debugKeys struct {
	Send, History, Scroll, Clear key.Binding
}

func newDebugKeys() debugKeys {
	return debugKeys{
		Send:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "run the command")),
		History: key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "earlier commands")),
		Scroll:  key.NewBinding(key.WithKeys("pgup", "pgdown"), key.WithHelp("pgup/pgdn", "scroll")),
		Clear:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear the line")),
	}
}

// debugOpen reports whether the debug pane is on screen.
func (m *model) debugOpen() bool { return m.live.debug != nil && m.inspected == nil }

// debugStopped opens (or updates) the debug pane at a stop of the live
// run, over whatever was on screen, and tells the run a person's prompt
// waits: its hook's time limit pauses.
func (m *model) debugStopped(e job.DebugStop) {
	if m.live.debug == nil {
		m.live.debug = newDebugPane()
	}
	m.live.debug.stopped(e)
	m.closeStored()
	m.showHelp = false
	m.artifacts = artifactsOverlay{}
	m.source = sourceView{}
	m.prompt.open = false
	if dc, ok := m.run.(job.DebugConsole); ok {
		dc.DebugWaiting(e.Seq)
	}
}

// debugResumed takes the worker's word that it runs again: a step keeps
// the pane (the next stop comes soon), anything else closes it.
func (m *model) debugResumed(e job.DebugResumed) {
	d := m.live.debug
	if d == nil {
		return
	}
	if e.Step {
		d.waiting = false
		return
	}
	m.live.debug = nil
	m.setFlash("the run goes on from "+components.Sanitize(displayName(d.stop.File))+fmt.Sprintf(":%d", d.stop.Line), themes.LevelOK)
}

// debugKey handles a key while the debug pane is open.
func (m *model) debugKey(msg tea.KeyPressMsg) tea.Cmd {
	d := m.live.debug
	page := 5
	switch msg.String() {
	case "enter":
		m.debugSend()
	case "up":
		if d.recall > 0 {
			d.recall--
			d.input = lineInput{value: []rune(d.history[d.recall])}
		}
	case "down":
		if d.recall < len(d.history) {
			d.recall++
			d.input = lineInput{}
			if d.recall < len(d.history) {
				d.input = lineInput{value: []rune(d.history[d.recall])}
			}
		}
	case "pgup", "ctrl+u":
		d.scroll = min(d.scroll+page, max(len(d.lines)-1, 0))
	case "pgdown", "ctrl+d":
		d.scroll = max(d.scroll-page, 0)
	case "esc":
		d.input = lineInput{}
	default:
		d.input.update(msg)
	}
	return nil
}

// debugSend sends the command typed to the run.
func (m *model) debugSend() {
	d := m.live.debug
	if !d.waiting {
		d.err = "the strategy runs: wait for the prompt"
		return
	}
	seq := d.stop.Seq
	line := d.take()
	dc, ok := m.run.(job.DebugConsole)
	if !ok {
		d.err = "this run has no debugger"
		return
	}
	if err := dc.DebugSend(seq, line); err != nil {
		d.err = err.Error()
	}
}

// debugHelp is the footer while the debug pane is open.
func (m *model) debugHelp() []key.Binding {
	dk := newDebugKeys()
	quit := key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit"))
	return []key.Binding{dk.Send, dk.History, dk.Scroll, dk.Clear, quit}
}

// debugView draws the debug pane in a w×h frame: the source and, beside
// it, the stack and the locals; below, the transcript and the prompt.
func (m *model) debugView(th themes.Theme, w, h int) string {
	d := m.live.debug
	cw, ch := max(w-2, 1), max(h-2, 1)
	topH := max(ch*55/100, 3)
	bottomH := ch - topH - 1
	srcW := max(cw*58/100, 10)
	sideW := max(cw-srcW-1, 1)
	left := d.sourceBlock(th, srcW, topH)
	right := d.sideBlock(th, sideW, topH)
	sep := strings.TrimSuffix(strings.Repeat(th.Muted.Render("│")+"\n", topH), "\n")
	top := components.JoinH(left, sep, right)
	rule := th.Muted.Render(strings.Repeat("─", cw))
	body := top + "\n" + rule + "\n" + d.transcript(th, cw, bottomH)
	return components.Frame(th, d.title(), body, w, h, true)
}

// title is the pane's title: where the worker stopped, and the pause.
func (d *debugPane) title() string {
	s := d.stop
	where := fmt.Sprintf("%s:%d in %s", displayName(s.File), s.Line, s.Function)
	if s.Hook != "" {
		where += " · " + string(s.Hook)
		if s.EventIndex >= 0 {
			where += " at event #" + units.Count(s.EventIndex)
		}
	}
	state := "stopped at " + components.Sanitize(where) + " · time limit paused"
	if !d.waiting {
		state = "running " + components.Sanitize(commandName(d.running)) + "…"
	}
	return "Debugger · " + state
}

// commandName is a command as the title shows it.
func commandName(cmd string) string {
	if strings.TrimSpace(cmd) == "" {
		return "the last command again"
	}
	return "`" + cmd + "`"
}

// sourceBlock is the source around the stop, the current line marked →,
// breakpoints ●, in exactly w×h cells.
func (d *debugPane) sourceBlock(th themes.Theme, w, h int) string {
	s := d.stop
	lines := []string{th.Accent.Render(components.Sanitize(fmt.Sprintf("%s:%d in %s", displayName(s.File), s.Line, s.Function)))}
	rows := h - 1
	at := slices.IndexFunc(s.Source, func(l job.DebugSource) bool { return l.Line == s.Line })
	first := components.WindowStart(len(s.Source), rows, max(at, 0))
	width := 1
	if n := len(s.Source); n > 0 {
		width = len(units.Count(s.Source[n-1].Line))
	}
	for _, l := range s.Source[first:min(first+rows, len(s.Source))] {
		lines = append(lines, sourceLine(th, l.Break, l.Line, width, components.Sanitize(l.Text), false, l.Line == s.Line, w))
	}
	if len(s.Source) == 0 {
		lines = append(lines, th.Muted.Render("(no source for this frame)"))
	}
	return components.FitLines(strings.Join(lines, "\n"), w, h)
}

// sideBlock is the stack, innermost frame last as pdb's where prints it,
// the frame the prompt looks at marked ▸, then the locals, in w×h cells.
func (d *debugPane) sideBlock(th themes.Theme, w, h int) string {
	s := d.stop
	stackRows := min(len(s.Stack), max(h/3, 1))
	lines := []string{th.Muted.Render("Stack (up/down move the prompt's frame)")}
	frames := s.Stack[max(len(s.Stack)-stackRows, 0):]
	if hidden := len(s.Stack) - len(frames); hidden > 0 {
		lines = append(lines, th.Muted.Render(fmt.Sprintf("  … %d outer", hidden)))
	}
	for _, f := range frames {
		mark, style := "  ", th.Muted
		if f.User {
			style = th.Text
		}
		if f.Current {
			mark, style = "▸ ", th.Accent
		}
		lines = append(lines, style.Render(components.Sanitize(fmt.Sprintf("%s%s:%d in %s", mark, filepath.Base(f.File), f.Line, f.Function))))
	}
	lines = append(lines, th.Muted.Render("Locals"))
	if len(s.Locals) == 0 {
		lines = append(lines, th.Muted.Render("  (none)"))
	}
	room := h - len(lines)
	for i, l := range s.Locals {
		if i == room-1 && len(s.Locals) > room {
			lines = append(lines, th.Muted.Render(fmt.Sprintf("  … %d more (p NAME shows one)", len(s.Locals)-i)))
			break
		}
		lines = append(lines, "  "+th.Text.Render(components.Sanitize(l.Name))+th.Muted.Render(" = ")+th.Text.Render(components.Sanitize(l.Value)))
	}
	return components.FitLines(strings.Join(lines, "\n"), w, h)
}

// transcript is what the debugger printed and the commands typed, its end
// in view unless scrolled, then the prompt, in w×h cells.
func (d *debugPane) transcript(th themes.Theme, w, h int) string {
	rows := max(h-1, 0)
	end := len(d.lines) - d.scroll
	start := max(end-rows, 0)
	var out []string
	for _, l := range d.lines[start:end] {
		style := th.Text
		if strings.HasPrefix(l, "(Pdb) ") {
			style = th.Muted
		}
		out = append(out, style.Render(l))
	}
	for len(out) < rows {
		out = append([]string{""}, out...)
	}
	if d.scroll > 0 && rows > 0 {
		out[rows-1] = th.Muted.Render(fmt.Sprintf("↓ %d more (pgdn)", d.scroll))
	}
	var prompt string
	switch {
	case d.err != "":
		prompt = th.Fail.Render(themes.LevelFail.Glyph() + " " + components.Sanitize(d.err))
		if d.waiting {
			prompt += th.Text.Render("  (Pdb) " + d.input.String() + "▏")
		}
	case d.waiting:
		prompt = th.Accent.Render("(Pdb) ") + th.Text.Render(d.input.String()+"▏") +
			th.Muted.Render("   n next · s step in · c continue · p EXPR · where · up/down · b FILE:LINE[, COND] · q no more stops")
	default:
		prompt = th.Muted.Render("running " + components.Sanitize(commandName(d.running)) + "… (the time limit runs)")
	}
	out = append(out, prompt)
	return components.FitLines(strings.Join(out, "\n"), w, h)
}

// debugDetail is the header's third line while the debug pane is open.
func (m *model) debugDetail(th themes.Theme, v *jobView) string {
	d := m.live.debug
	if !d.waiting {
		return m.progressLine(th, v)
	}
	text := "⏸ stopped at " + components.Sanitize(fmt.Sprintf("%s:%d", displayName(d.stop.File), d.stop.Line)) +
		": the hook's time limit is paused while the prompt waits for you (memory and processes still count)"
	if v.idle > 0 {
		text += "; the run ends after " + units.Duration(v.idle) + " without a command"
	}
	return th.Warn.Render(text)
}
