// Package components holds what the programs of ui draw with: frames and
// text fitted to a cell width, gauges, sparklines, the heatmap, the help
// bar's styles, and the shell both programs run in (the colour theme,
// interrupts from the caller's signal policy). It knows nothing of jobs or
// sweeps: the programs (ui/workbench, ui/sweepview) give it plain values.
package components

import (
	"math"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"stratbench/internal/termtext"
	"stratbench/themes"
)

// frameGlyphs returns the border glyphs: top-left, horizontal, top-right,
// vertical, bottom-left, bottom-right. A focused pane gets heavy lines as
// well as the focus colour, so focus stays visible without colour.
func frameGlyphs(focused bool) [6]string {
	if focused {
		return [6]string{"┏", "━", "┓", "┃", "┗", "┛"}
	}
	return [6]string{"╭", "─", "╮", "│", "╰", "╯"}
}

// Frame draws body in a box of exactly w×h cells with title set into the top
// border. Body lines are cut or padded to fit.
func Frame(th themes.Theme, title, body string, w, h int, focused bool) string {
	if w < 4 || h < 2 {
		return Blank(w, h)
	}
	glyphs, border, titleStyle := frameGlyphs(focused), th.Border, th.PaneTitle
	if focused {
		border, titleStyle = th.FocusBorder, th.FocusTitle
	}
	// ╭─ title ─…─╮: five cells besides the title.
	title = ansi.Truncate(title, w-5, "…")
	rest := w - 5 - ansi.StringWidth(title)
	var b strings.Builder
	b.WriteString(border.Render(glyphs[0] + glyphs[1]))
	b.WriteString(titleStyle.Render(" " + title + " "))
	b.WriteString(border.Render(strings.Repeat(glyphs[1], max(rest, 0)) + glyphs[2]))
	side := border.Render(glyphs[3])
	lines := strings.Split(body, "\n")
	for i := range h - 2 {
		line := ""
		if i < len(lines) {
			line = lines[i]
		}
		b.WriteByte('\n')
		b.WriteString(side)
		b.WriteString(Fit(line, w-2))
		b.WriteString(side)
	}
	b.WriteByte('\n')
	b.WriteString(border.Render(glyphs[4] + strings.Repeat(glyphs[1], w-2) + glyphs[5]))
	return b.String()
}

// Blank returns h lines of w spaces.
func Blank(w, h int) string {
	if h <= 0 {
		return ""
	}
	line := strings.Repeat(" ", max(w, 0))
	return strings.TrimSuffix(strings.Repeat(line+"\n", h), "\n")
}

// Fit cuts s (which may carry styles) to w cells and pads it with spaces to
// exactly w cells.
func Fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := ansi.StringWidth(s)
	if n > w {
		s = ansi.Truncate(s, w, "…")
		n = ansi.StringWidth(s)
	}
	return s + strings.Repeat(" ", max(w-n, 0))
}

// FitLines fits every line of s to w cells and returns exactly h lines.
func FitLines(s string, w, h int) string {
	if h <= 0 {
		return ""
	}
	lines := strings.Split(s, "\n")
	out := make([]string, h)
	for i := range out {
		if i < len(lines) {
			out[i] = Fit(lines[i], w)
		} else {
			out[i] = strings.Repeat(" ", max(w, 0))
		}
	}
	return strings.Join(out, "\n")
}

// Sanitize makes a line of program output safe to draw: escape sequences and
// control characters are removed and tabs expanded, so a strategy's output
// cannot move the cursor or restyle the screen.
func Sanitize(s string) string { return termtext.Line(s) }

// SparkGlyphs are the eight heights of a sparkline cell.
const SparkGlyphs = "▁▂▃▄▅▆▇█"

// Sparkline draws the last w values on a log scale between their minimum
// and maximum: hook durations have rare outliers that a linear scale would
// turn into one tall bar over a flat line.
func Sparkline(vals []float64, w int) string {
	if w <= 0 || len(vals) == 0 {
		return ""
	}
	if len(vals) > w {
		vals = vals[len(vals)-w:]
	}
	lo, hi := math.Inf(1), 0.0
	for _, v := range vals {
		if v > 0 {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	glyphs := []rune(SparkGlyphs)
	top := len(glyphs) - 1
	out := make([]rune, len(vals))
	for i, v := range vals {
		idx := 0
		switch {
		case v <= 0:
		case hi <= lo:
			idx = top / 2
		default:
			idx = int(math.Round(math.Log(v/lo) / math.Log(hi/lo) * float64(top)))
		}
		out[i] = glyphs[min(max(idx, 0), top)]
	}
	return string(out)
}

// JoinH puts blocks of equal height side by side.
func JoinH(blocks ...string) string {
	split := make([][]string, len(blocks))
	rows := 0
	for i, b := range blocks {
		split[i] = strings.Split(b, "\n")
		rows = max(rows, len(split[i]))
	}
	var sb strings.Builder
	for r := range rows {
		if r > 0 {
			sb.WriteByte('\n')
		}
		for _, lines := range split {
			if r < len(lines) {
				sb.WriteString(lines[r])
			}
		}
	}
	return sb.String()
}

// Clip cuts s to n cells, ending with … when it was longer.
func Clip(s string, n int) string { return ansi.Truncate(s, n, "…") }

// WindowStart is the first of n items to show in size slots so that item
// at is in sight, centred where it can be.
func WindowStart(n, size, at int) int {
	if n <= size {
		return 0
	}
	return min(max(at-size/2, 0), n-size)
}
