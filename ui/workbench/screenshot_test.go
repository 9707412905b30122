package workbench

import (
	"flag"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"stratbench/internal/testenv"
	"stratbench/themes"
)

var screenshot = flag.Bool("screenshot", false, "write docs/workbench.svg, the README's picture of the workbench")

// TestScreenshot draws the workbench as the README shows it: a recorded
// real run (the example strategy, passed) in the dark theme, 120×40, turned
// into an SVG. It checks the drawing always; with -screenshot (see
// docs/screenshot.sh) it writes docs/workbench.svg.
func TestScreenshot(t *testing.T) {
	m := newTestModel(t, 120, 40)
	th, err := themes.NamedFor("dark", colorprofile.ANSI)
	if err != nil {
		t.Fatal(err)
	}
	m.theme, m.profile, m.noColor = th, colorprofile.ANSI, false
	live(t, m, "passed", true)
	svg := toSVG(m.View().Content, 120, 40)
	if !strings.HasPrefix(svg, "<svg") || !strings.Contains(svg, "PASSED") || strings.Contains(svg, "\x1b") {
		t.Fatalf("not an SVG of the screen:\n%.400s", svg)
	}
	if !*screenshot {
		return
	}
	path := filepath.Join(testenv.Root(t), "docs", "workbench.svg")
	if err := os.WriteFile(path, []byte(svg), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}

// ansiColours are the 16 ANSI colours as the SVG draws them (a common dark
// terminal palette).
var ansiColours = [16]string{
	"#1e1e1e", "#e06c75", "#98c379", "#e5c07b", "#61afef", "#c678dd", "#56b6c2", "#d4d4d4",
	"#7f848e", "#ff7b86", "#b5e890", "#ffd68a", "#82c4ff", "#e49bff", "#7fdbe6", "#ffffff",
}

var sgrParams = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// toSVG draws a screen of w×h cells (text with SGR sequences of the 16
// colours, bold and reverse) as an SVG of monospace text.
func toSVG(screen string, w, h int) string {
	const cellW, cellH = 8.4, 17
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%d" viewBox="0 0 %.0f %d" font-family="'DejaVu Sans Mono', Menlo, Consolas, monospace" font-size="14">`+"\n",
		float64(w)*cellW+16, h*cellH+16, float64(w)*cellW+16, h*cellH+16)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" rx="6" fill="%s"/>`+"\n", ansiColours[0])
	type style struct {
		fg, bg        int // -1 for the default
		bold, reverse bool
	}
	for row, line := range strings.Split(screen, "\n") {
		if row >= h {
			break
		}
		st := style{fg: -1, bg: -1}
		col := 0
		y := float64(row*cellH) + 8
		rest := line
		for len(rest) > 0 {
			loc := sgrParams.FindStringSubmatchIndex(rest)
			text := rest
			if loc != nil {
				text = rest[:loc[0]]
			}
			if text != "" {
				n := ansi.StringWidth(text)
				fg, bg := st.fg, st.bg
				if st.reverse {
					fg, bg = bg, fg
					if fg < 0 {
						fg = 0
					}
					if bg < 0 {
						bg = 7
					}
				}
				x := float64(col)*cellW + 8
				if bg >= 0 {
					fmt.Fprintf(&b, `<rect x="%.1f" y="%.0f" width="%.1f" height="%d" fill="%s"/>`+"\n", x, y, float64(n)*cellW, cellH, ansiColours[bg])
				}
				fill := "#d4d4d4"
				if fg >= 0 {
					fill = ansiColours[fg]
				}
				weight := ""
				if st.bold {
					weight = ` font-weight="bold"`
				}
				if strings.TrimSpace(text) != "" {
					fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" fill="%s"%s xml:space="preserve" textLength="%.1f" lengthAdjust="spacingAndGlyphs">%s</text>`+"\n",
						x, y+13, fill, weight, float64(n)*cellW, html.EscapeString(text))
				}
				col += n
			}
			if loc == nil {
				break
			}
			ps := strings.Split(rest[loc[2]:loc[3]], ";")
			for _, p := range ps {
				n, _ := strconv.Atoi(p)
				switch {
				case p == "" || n == 0:
					st = style{fg: -1, bg: -1}
				case n == 1:
					st.bold = true
				case n == 22:
					st.bold = false
				case n == 7:
					st.reverse = true
				case n == 27:
					st.reverse = false
				case n >= 30 && n <= 37:
					st.fg = n - 30
				case n >= 90 && n <= 97:
					st.fg = n - 90 + 8
				case n == 39:
					st.fg = -1
				case n >= 40 && n <= 47:
					st.bg = n - 40
				case n >= 100 && n <= 107:
					st.bg = n - 100 + 8
				case n == 49:
					st.bg = -1
				}
			}
			rest = rest[loc[1]:]
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}
