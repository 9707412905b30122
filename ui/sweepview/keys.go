package sweepview

import (
	"charm.land/bubbles/v2/key"

	"stratbench/ui/components"
)

// sweepKeys are the sweep view's keys; the help bar and ? come from them.
type sweepKeys struct {
	Quit, Help, Stop, Up, Down, PageUp, PageDown, Top, Bottom, Enter, Back key.Binding
	NextX, PrevX, NextY, PrevY, Swap, NextFold, PrevFold                   key.Binding
	PanLeft, PanRight, PanUp, PanDown, ZoomIn, ZoomOut, Centre             key.Binding
	Pan                                                                    key.Binding // ?'s one line for the four pan keys
	Theme, Report                                                          key.Binding
	// The help bar's entries, shorter, some for a group of keys each
	// (↑/↓, x/y, f/F, H J K L, + -); ? lists the keys one by one.
	short struct{ Quit, Open, Select, Axes, Fold, Pan, Zoom, Back key.Binding }
}

// fullHelp is the ? overlay's keys, each once.
func (k sweepKeys) fullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Enter, k.Back, k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.NextX, k.PrevX, k.NextY, k.PrevY, k.Swap, k.NextFold, k.PrevFold},
		{k.Pan, k.ZoomIn, k.ZoomOut, k.Centre},
		{k.Stop, k.Report, k.Theme, k.Help, k.Quit},
	}
}

func newSweepKeys() sweepKeys {
	b := components.Key
	k := sweepKeys{
		Quit: b("q", "quit (stops the sweep)", "q"),
		Help: b("?", "help", "?"),
		Stop: b("s", "stop the sweep", "s"),
		Up:   b("↑/k", "up", "up", "k"),
		Down: b("↓/j", "down", "down", "j"),
		// As in the workbench's lists.
		PageUp:   b("pgup/b", "page up", "pgup", "b", "ctrl+u"),
		PageDown: b("pgdn/space", "page down", "pgdown", "space", "ctrl+d"),
		Top:      b("g", "best", "g", "home"),
		Bottom:   b("G", "last", "G", "end"),
		Enter:    b("enter", "open the run's job", "enter"),
		Back:     b("esc", "back to the sweep", "esc"),
		NextX:    b("x", "next x param", "x"),
		PrevX:    b("X", "previous x param", "X"),
		NextY:    b("y", "next y param", "y"),
		PrevY:    b("Y", "previous y param", "Y"),
		Swap:     b("w", "swap the axes", "w"),
		NextFold: b("f", "next fold", "f"),
		PrevFold: b("F", "previous fold", "F"),
		// Capitals, as the list takes j and k; shift+arrows too.
		PanLeft:  b("H", "pan the heatmap left", "H", "shift+left"),
		PanRight: b("L", "pan right", "L", "shift+right"),
		PanUp:    b("K", "pan up", "K", "shift+up"),
		PanDown:  b("J", "pan down", "J", "shift+down"),
		ZoomIn:   b("+", "zoom in: values", "+", "="),
		ZoomOut:  b("-", "zoom out: more cells", "-"),
		Centre:   b("c", "centre on the selected run", "c"),
		Pan:      b("H J K L", "pan the heatmap (⇧ arrows too)", "H", "J", "K", "L"),
		Theme:    b("t", "theme", "t"),
		Report:   b("o", "open the sweep's HTML report", "o"),
	}
	k.short.Quit = b("q", "quit", "q")
	k.short.Open = b("enter", "open", "enter")
	k.short.Select = b("↑/↓", "select", "up", "down")
	k.short.Axes = b("x/y", "axes", "x", "y")
	k.short.Fold = b("f/F", "fold", "f", "F")
	k.short.Pan = b("HJKL", "pan", "H", "J", "K", "L")
	k.short.Zoom = b("+/-", "zoom", "+", "-")
	k.short.Back.SetEnabled(false) // Options.Back
	return k
}
