// Package themes holds the workbench's Lip Gloss styles: the named colour
// themes, a colourless theme for NO_COLOR, and the three levels (ok, warn,
// fail) every state is drawn in. Which value is at which level is the
// gauges' business (ui), not the theme's.
//
// Colours mean one thing everywhere: ok is green, warn is yellow, fail is red,
// in every pane (the light theme at 16 colours draws warn in bold magenta:
// the ANSI yellow cannot be read on white). State is never carried by colour alone: every styled state
// also has a glyph (✓ ⚠ ✗) and a word, so a NO_COLOR terminal reads the same.
package themes

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"os"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
)

// Theme is a complete set of styles for the workbench.
type Theme struct {
	// Name is the theme's name as --theme takes it ("plain" for NO_COLOR).
	Name string
	// Dark reports whether the theme is meant for a dark background.
	Dark bool

	Text   lipgloss.Style // ordinary text
	Muted  lipgloss.Style // secondary text: labels, units, hints
	Accent lipgloss.Style // emphasis that is not a state: the strategy path, the live job
	Title  lipgloss.Style // the product name in the header

	OK   lipgloss.Style // passed, within limits
	Warn lipgloss.Style // stopped, at 75 % of a limit or more
	Fail lipgloss.Style // failed, at 90 % of a limit or more

	Border      lipgloss.Style // frame of an unfocused pane
	FocusBorder lipgloss.Style // frame of the focused pane
	PaneTitle   lipgloss.Style // title of an unfocused pane
	FocusTitle  lipgloss.Style // title of the focused pane

	Selected lipgloss.Style // the selected row of a list
	Match    lipgloss.Style // a search match in the logs
	Marked   lipgloss.Style // the strategy's own frames in a traceback

	HelpKey  lipgloss.Style // a key in the help bar
	HelpDesc lipgloss.Style // its description
	HelpSep  lipgloss.Style // the separator between help items
}

// Level is how close a value is to its limit.
type Level int

// Levels, from harmless to critical.
const (
	LevelOK Level = iota
	LevelWarn
	LevelFail
)

// Glyph returns the symbol that carries a level without colour.
func (l Level) Glyph() string {
	switch l {
	case LevelWarn:
		return "⚠"
	case LevelFail:
		return "✗"
	}
	return "✓"
}

// Style returns the theme's style for a level.
func (t Theme) Style(l Level) lipgloss.Style {
	switch l {
	case LevelWarn:
		return t.Warn
	case LevelFail:
		return t.Fail
	}
	return t.OK
}

// Names lists the colour themes, default first.
func Names() []string {
	return []string{"dark", "light", "high-contrast"}
}

// Named returns the theme called name for a terminal of 256 colours or
// more. "plain" is the colourless theme that NO_COLOR selects; it is
// accepted but not listed.
func Named(name string) (Theme, error) { return NamedFor(name, colorprofile.ANSI256) }

// NamedFor returns the theme called name for a terminal of the colour
// profile p. With 16 colours (or 8) a theme uses the 16 ANSI colours only,
// chosen to stay readable on its background: downsampling its 256-colour
// greys would turn muted text and borders into the background's own white
// or black. Without colour it is the plain theme.
func NamedFor(name string, p colorprofile.Profile) (Theme, error) {
	low := p < colorprofile.ANSI256
	switch strings.ToLower(name) {
	case "dark":
		return dark(), nil // ANSI colours only already
	case "light":
		if low {
			return light16(), nil
		}
		return light(), nil
	case "high-contrast":
		return highContrast(), nil // ANSI colours only already
	case "plain":
		return Plain(), nil
	}
	return Theme{}, fmt.Errorf("unknown theme %q (themes: %s)", name, strings.Join(Names(), ", "))
}

// Profile returns the colour profile to draw in for the terminal on w,
// whose environment is environ: colorprofile's detection, corrected where
// it promises more than the terminal has. TERM=screen and TERM=tmux (without
// -256color) are 8-colour terminals by their terminfo, which colorprofile
// takes for 256; NO_COLOR (any value, as no-color.org says) is no colour.
func Profile(w io.Writer, environ []string) colorprofile.Profile {
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	if env["NO_COLOR"] != "" {
		return colorprofile.Ascii
	}
	return correct(colorprofile.Detect(w, environ), env)
}

// correct lowers a detected profile to what the terminal has.
func correct(p colorprofile.Profile, env map[string]string) colorprofile.Profile {
	if term := env["TERM"]; (term == "screen" || term == "tmux") && env["COLORTERM"] == "" && p > colorprofile.ANSI {
		return colorprofile.ANSI
	}
	return p
}

// NoColor reports whether the user asked for no colour. Any non-empty
// NO_COLOR disables colour, as no-color.org specifies; colorprofile's own
// check parses the value as a boolean and so keeps colour for NO_COLOR=0 or
// NO_COLOR=yes.
func NoColor() bool {
	return os.Getenv("NO_COLOR") != ""
}

// Plain returns the colourless theme: bold, faint and reverse only, so focus,
// selection and matches stay visible on a NO_COLOR terminal.
func Plain() Theme {
	s := lipgloss.NewStyle
	return Theme{
		Name:        "plain",
		Dark:        true,
		Text:        s(),
		Muted:       s(),
		Accent:      s().Bold(true),
		Title:       s().Bold(true),
		OK:          s(),
		Warn:        s().Bold(true),
		Fail:        s().Bold(true),
		Border:      s(),
		FocusBorder: s().Bold(true),
		PaneTitle:   s(),
		FocusTitle:  s().Bold(true).Reverse(true),
		Selected:    s().Reverse(true),
		Match:       s().Reverse(true),
		Marked:      s().Bold(true),
		HelpKey:     s().Bold(true),
		HelpDesc:    s(),
		HelpSep:     s(),
	}
}

// palette is what differs between the colour themes.
type palette struct {
	name                          string
	dark                          bool
	text, muted, accent           color.Color
	ok, warn, fail                color.Color
	border, focus                 color.Color
	bold                          bool // bold states, for high contrast
	selectedFg, selectedBg, match color.Color
	matchFg                       color.Color // text on a search match; selectedFg when nil
	helpKey, helpDesc, helpSep    color.Color
	titleFg, focusTitleFg         color.Color
	focusTitleBg                  color.Color
	markedFg                      color.Color
}

func (p palette) theme() Theme {
	s := lipgloss.NewStyle
	fg := func(c color.Color) lipgloss.Style { return s().Foreground(c) }
	state := func(c color.Color) lipgloss.Style { return fg(c).Bold(p.bold) }
	return Theme{
		Name:        p.name,
		Dark:        p.dark,
		Text:        fg(p.text),
		Muted:       fg(p.muted),
		Accent:      fg(p.accent).Bold(true),
		Title:       fg(p.titleFg).Bold(true),
		OK:          state(p.ok),
		Warn:        state(p.warn),
		Fail:        state(p.fail),
		Border:      fg(p.border),
		FocusBorder: fg(p.focus).Bold(true),
		PaneTitle:   fg(p.muted),
		FocusTitle:  fg(p.focusTitleFg).Background(p.focusTitleBg).Bold(true),
		Selected:    fg(p.selectedFg).Background(p.selectedBg),
		Match:       fg(cmp.Or[color.Color](p.matchFg, p.selectedFg)).Background(p.match),
		Marked:      fg(p.markedFg).Bold(true),
		HelpKey:     fg(p.helpKey).Bold(true),
		HelpDesc:    fg(p.helpDesc),
		HelpSep:     fg(p.helpSep),
	}
}

// The colour themes use ANSI palette indices where they can, so that the
// user's terminal palette applies.
func dark() Theme {
	c := lipgloss.Color
	return palette{
		name: "dark", dark: true,
		text: c("7"), muted: c("8"), accent: c("6"),
		ok: c("2"), warn: c("3"), fail: c("1"),
		border: c("8"), focus: c("6"),
		selectedFg: c("0"), selectedBg: c("6"), match: c("3"),
		helpKey: c("7"), helpDesc: c("8"), helpSep: c("8"),
		titleFg: c("6"), focusTitleFg: c("0"), focusTitleBg: c("6"),
		markedFg: c("6"),
	}.theme()
}

func light() Theme {
	c := lipgloss.Color
	return palette{
		name: "light", dark: false,
		text: c("0"), muted: c("244"), accent: c("25"),
		ok: c("28"), warn: c("130"), fail: c("160"),
		border: c("248"), focus: c("25"),
		selectedFg: c("15"), selectedBg: c("25"), match: c("220"), matchFg: c("0"),
		helpKey: c("0"), helpDesc: c("242"), helpSep: c("248"),
		titleFg: c("25"), focusTitleFg: c("15"), focusTitleBg: c("25"),
		markedFg: c("25"),
	}.theme()
}

// light16 is the light theme in the 16 ANSI colours: no white or light grey
// for text or borders (they would vanish into the background), black text
// on the gold of a search match.
func light16() Theme {
	c := lipgloss.Color
	return palette{
		name: "light", dark: false,
		text: c("0"), muted: c("8"), accent: c("4"),
		ok: c("2"), warn: c("5"), fail: c("1"), bold: true,
		border: c("8"), focus: c("4"),
		selectedFg: c("15"), selectedBg: c("4"), match: c("3"), matchFg: c("0"),
		helpKey: c("0"), helpDesc: c("8"), helpSep: c("8"),
		titleFg: c("4"), focusTitleFg: c("15"), focusTitleBg: c("4"),
		markedFg: c("4"),
	}.theme()
}

func highContrast() Theme {
	c := lipgloss.Color
	return palette{
		name: "high-contrast", dark: true, bold: true,
		text: c("15"), muted: c("7"), accent: c("14"),
		ok: c("10"), warn: c("11"), fail: c("9"),
		border: c("7"), focus: c("11"),
		selectedFg: c("0"), selectedBg: c("15"), match: c("11"),
		helpKey: c("15"), helpDesc: c("7"), helpSep: c("7"),
		titleFg: c("15"), focusTitleFg: c("0"), focusTitleBg: c("11"),
		markedFg: c("14"),
	}.theme()
}
