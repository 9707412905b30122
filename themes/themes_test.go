package themes

import (
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
)

func TestGlyphs(t *testing.T) {
	if LevelOK.Glyph() != "✓" || LevelWarn.Glyph() != "⚠" || LevelFail.Glyph() != "✗" {
		t.Error("glyphs changed")
	}
}

func TestNamed(t *testing.T) {
	for _, name := range append(Names(), "plain", "DARK") {
		th, err := Named(name)
		if err != nil {
			t.Fatalf("Named(%q): %v", name, err)
		}
		if th.Name != strings.ToLower(name) {
			t.Errorf("Named(%q).Name = %q", name, th.Name)
		}
	}
	_, err := Named("solarized")
	if err == nil || !strings.Contains(err.Error(), "dark, light, high-contrast") {
		t.Errorf("unknown theme: %v", err)
	}
	if d, _ := Named("dark"); !d.Dark {
		t.Error("dark is not dark")
	}
	if l, _ := Named("light"); l.Dark {
		t.Error("light is dark")
	}
}

// TestNoColor follows no-color.org: any non-empty value disables colour,
// including the values colorprofile's boolean parse gets wrong.
func TestNoColor(t *testing.T) {
	for value, want := range map[string]bool{"": false, "1": true, "0": true, "yes": true, "false": true, "true": true} {
		t.Setenv("NO_COLOR", value)
		if got := NoColor(); got != want {
			t.Errorf("NO_COLOR=%q: NoColor() = %v, want %v", value, got, want)
		}
	}
}

var sgrColour = regexp.MustCompile(`\x1b\[[0-9;]*(3[0-9]|4[0-9]|9[0-7]|10[0-7])[;m]`)

// TestPlainHasNoColour renders every style of the plain theme: attributes
// only, and focus still differs from no focus.
func TestPlainHasNoColour(t *testing.T) {
	th := Plain()
	styles := map[string]string{
		"text": th.Text.Render("x"), "muted": th.Muted.Render("x"), "accent": th.Accent.Render("x"),
		"ok": th.OK.Render("x"), "warn": th.Warn.Render("x"), "fail": th.Fail.Render("x"),
		"border": th.Border.Render("x"), "focus": th.FocusBorder.Render("x"),
		"title": th.PaneTitle.Render("x"), "focus title": th.FocusTitle.Render("x"),
		"selected": th.Selected.Render("x"), "match": th.Match.Render("x"),
	}
	for name, out := range styles {
		if sgrColour.MatchString(out) {
			t.Errorf("%s sets a colour: %q", name, out)
		}
	}
	if styles["focus title"] == styles["title"] || styles["selected"] == styles["text"] {
		t.Error("focus or selection is invisible without colour")
	}
	dark, _ := Named("dark")
	if !sgrColour.MatchString(dark.Fail.Render("x")) {
		t.Error("the dark theme's fail style has no colour")
	}
}

// TestStatesDiffer checks that ok, warn and fail are three different
// colours in every colour theme.
func TestStatesDiffer(t *testing.T) {
	for _, name := range Names() {
		th, _ := Named(name)
		ok, warn, fail := th.Style(LevelOK).Render("x"), th.Style(LevelWarn).Render("x"), th.Style(LevelFail).Render("x")
		if ok == warn || warn == fail || ok == fail {
			t.Errorf("%s: ok %q, warn %q, fail %q are not distinct", name, ok, warn, fail)
		}
	}
}

func TestProfileCorrection(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want colorprofile.Profile
	}{
		{[]string{"TERM=screen"}, colorprofile.ANSI},
		{[]string{"TERM=tmux"}, colorprofile.ANSI},
		{[]string{"TERM=screen", "COLORTERM=truecolor"}, colorprofile.ANSI256}, // COLORTERM says the terminal under screen has more
		{[]string{"TERM=screen-256color"}, colorprofile.ANSI256},
		{[]string{"TERM=xterm"}, colorprofile.ANSI},
		{[]string{"TERM=xterm-256color"}, colorprofile.ANSI256},
	} {
		env := map[string]string{}
		for _, kv := range tc.env {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		if got := correct(colorprofile.Env(tc.env), env); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.env, got, tc.want)
		}
	}
	if got := Profile(io.Discard, []string{"TERM=xterm-256color", "NO_COLOR=yes"}); got != colorprofile.Ascii {
		t.Errorf("NO_COLOR=yes: %s, want Ascii", got)
	}
}
