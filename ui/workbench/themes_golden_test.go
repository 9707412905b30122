package workbench

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"

	"stratbench/themes"
)

// TestGoldenThemes renders every theme at 16 and at 256 colours, downsampled
// as Bubble Tea sends it to such a terminal, in a state that shows every
// style (a run in flight, a search match, the focused pane, the help bar,
// the failure pane), and checks that no text is drawn in the colour of the
// theme's own background.
func TestGoldenThemes(t *testing.T) {
	profiles := []struct {
		name string
		p    colorprofile.Profile
	}{{"16", colorprofile.ANSI}, {"256", colorprofile.ANSI256}}
	for _, name := range themes.Names() {
		for _, pr := range profiles {
			t.Run(fmt.Sprintf("%s/%s", name, pr.name), func(t *testing.T) {
				th, err := themes.NamedFor(name, pr.p)
				if err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				for _, state := range []func(m *model){
					func(m *model) { // a search match in the logs, the running job
						live(t, m, "demo", false)
						m.Update(press("/"))
						typeKeys(m, "sell")
						m.Update(press("enter"))
					},
					func(m *model) { // the failure pane, focused
						live(t, m, "failed-exception", true)
						m.setFocus(paneFailure)
					},
				} {
					m := newTestModel(t, 120, 40)
					m.theme, m.profile, m.noColor = th, pr.p, false
					state(m)
					w := &colorprofile.Writer{Forward: &out, Profile: pr.p}
					if _, err := w.Write([]byte(m.View().Content + "\n")); err != nil {
						t.Fatal(err)
					}
				}
				checkReadable(t, out.String(), th.Dark, pr.p)
				golden.RequireEqual(t, out.String())
			})
		}
	}
}

var sgrSeq = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// checkReadable fails for a printed character whose foreground is the
// theme's background colour (white or light grey on a light theme, black on
// a dark one) with no background of its own: it would be invisible.
func checkReadable(t *testing.T, out string, dark bool, p colorprofile.Profile) {
	t.Helper()
	invisible := map[string]bool{"37": true, "97": true, "38;5;7": true, "38;5;15": true, "38;5;255": true, "38;5;254": true, "38;5;253": true}
	if dark {
		invisible = map[string]bool{"30": true, "38;5;0": true, "38;5;16": true}
	}
	if p == colorprofile.ANSI {
		for code := range invisible {
			if strings.HasPrefix(code, "38;5;") {
				delete(invisible, code)
			}
		}
	}
	fg, bg := "", false
	for _, line := range strings.Split(out, "\n") {
		rest := line
		for len(rest) > 0 {
			loc := sgrSeq.FindStringSubmatchIndex(rest)
			text := rest
			if loc != nil {
				text = rest[:loc[0]]
			}
			if strings.TrimSpace(text) != "" && invisible[fg] && !bg {
				t.Fatalf("text %q drawn in %s with no background, on a %s theme:\n%q", text, fg, map[bool]string{true: "dark", false: "light"}[dark], line)
			}
			if loc == nil {
				break
			}
			fg, bg = applySGR(rest[loc[2]:loc[3]], fg, bg)
			rest = rest[loc[1]:]
		}
	}
}

// applySGR applies one SGR parameter list to the foreground (as a code:
// "31", "38;5;244") and whether a background is set.
func applySGR(params, fg string, bg bool) (string, bool) {
	ps := strings.Split(params, ";")
	for i := 0; i < len(ps); i++ {
		n, _ := strconv.Atoi(ps[i])
		switch {
		case ps[i] == "" || n == 0:
			fg, bg = "", false
		case n == 38 && i+2 < len(ps) && ps[i+1] == "5":
			fg = "38;5;" + ps[i+2]
			i += 2
		case n == 38 && i+4 < len(ps) && ps[i+1] == "2":
			fg = strings.Join(ps[i:i+5], ";")
			i += 4
		case n == 48 && i+2 < len(ps) && ps[i+1] == "5":
			bg = true
			i += 2
		case n == 48 && i+4 < len(ps) && ps[i+1] == "2":
			bg = true
			i += 4
		case n == 39:
			fg = ""
		case n == 49:
			bg = false
		case n >= 30 && n <= 37 || n >= 90 && n <= 97:
			fg = ps[i]
		case n >= 40 && n <= 47 || n >= 100 && n <= 107:
			bg = true
		}
	}
	return fg, bg
}
