package workbench

import (
	"charm.land/bubbles/v2/key"

	"stratbench/ui/components"
)

// keyMap holds every key binding of the workbench. The help bar and the ?
// overlay are generated from it, so help cannot drift from the real keys.
type keyMap struct {
	Quit      key.Binding
	Help      key.Binding
	Rerun     key.Binding
	Stop      key.Binding
	NextPane  key.Binding
	PrevPane  key.Binding
	PaneJump  key.Binding // the help entry for 1–6; Panes holds the real bindings
	Panes     [paneCount]key.Binding
	Up        key.Binding
	Down      key.Binding
	PageUp    key.Binding
	PageDown  key.Binding
	Top       key.Binding
	Bottom    key.Binding
	Enter     key.Binding
	Back      key.Binding
	Search    key.Binding
	NextMatch key.Binding
	PrevMatch key.Binding
	Follow    key.Binding
	Wrap      key.Binding
	Left      key.Binding
	Right     key.Binding
	Edit      key.Binding
	Theme     key.Binding
	Artifacts key.Binding
	Report    key.Binding
	// The debugger's: a breakpoint on the line of the failure pane's
	// selected frame or of the source view's cursor (or off again), all
	// of them cleared, the source view, the failure pane's frames.
	Breakpoint  key.Binding
	ClearBreaks key.Binding
	Source      key.Binding
	Frames      key.Binding // the help entry for [ and ]; PrevFrame and NextFrame are the real ones
	PrevFrame   key.Binding
	NextFrame   key.Binding
}

func newKeyMap() keyMap {
	b := components.Key
	km := keyMap{
		Quit:      b("q", "quit", "q", "ctrl+c"),
		Help:      b("?", "help", "?"),
		Rerun:     b("r", "re-run", "r"),
		Stop:      b("s", "stop", "s"),
		NextPane:  b("tab", "next pane", "tab"),
		PrevPane:  b("shift+tab", "prev pane", "shift+tab"),
		PaneJump:  b("1-6", "pane", "1", "2", "3", "4", "5", "6"),
		Up:        b("↑/k", "up", "up", "k"),
		Down:      b("↓/j", "down", "down", "j"),
		PageUp:    b("pgup", "page up", "pgup", "ctrl+u"),
		PageDown:  b("pgdn/space", "page down", "pgdown", "space", "ctrl+d"),
		Top:       b("g/home", "top", "g", "home"),
		Bottom:    b("G/end", "bottom", "G", "end"),
		Enter:     b("enter", "open job", "enter"),
		Back:      b("esc", "back", "esc"),
		Search:    b("/", "search", "/"),
		NextMatch: b("n", "next match", "n"),
		PrevMatch: b("N", "prev match", "N"),
		Follow:    b("F", "follow", "F"),
		Wrap:      b("w", "wrap lines", "w"),
		Left:      b("←/h", "scroll left", "left", "h"),
		Right:     b("→/l", "scroll right", "right", "l"),
		Edit:      b("e", "edit failing line", "e"),
		Theme:     b("t", "theme", "t"),
		Artifacts: b("a", "artifacts", "a"),
		Report:    b("o", "open the HTML report", "o"),

		Breakpoint:  b("b", "breakpoint", "b"),
		ClearBreaks: b("B", "clear breakpoints", "B"),
		Source:      b("v", "view source", "v"),
		Frames:      b("[/]", "frame", "[", "]"),
		PrevFrame:   b("[", "prev frame", "["),
		NextFrame:   b("]", "next frame", "]"),
	}
	for i := range km.Panes {
		d := string(rune('1' + i))
		km.Panes[i] = b(d, paneID(i).String(), d)
	}
	return km
}

// shortHelp is the help bar: help and quit, then the focused pane's own
// keys, which matter most where they are, then the run and focus keys.
func (k keyMap) shortHelp(paneKeys []key.Binding) []key.Binding {
	out := []key.Binding{k.Help, k.Quit}
	out = append(out, paneKeys...)
	return append(out, k.Rerun, k.Stop, k.NextPane, k.PaneJump)
}

// fullHelp is the ? overlay, one column per group.
func (k keyMap) fullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Rerun, k.Stop, k.Edit, k.Theme, k.Help, k.Quit},
		{k.NextPane, k.PrevPane, k.PaneJump, k.Enter, k.Back, k.Artifacts, k.Report},
		{k.Source, k.Breakpoint, k.ClearBreaks, k.Frames},
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Search, k.NextMatch, k.PrevMatch, k.Follow, k.Wrap, k.Left, k.Right},
	}
}
