package ui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"stratbench/internal/termtext"
	"stratbench/internal/units"
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

// frame draws body in a box of exactly w×h cells with title set into the top
// border. Body lines are cut or padded to fit.
func frame(th themes.Theme, title, body string, w, h int, focused bool) string {
	if w < 4 || h < 2 {
		return blank(w, h)
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
		b.WriteString(fit(line, w-2))
		b.WriteString(side)
	}
	b.WriteByte('\n')
	b.WriteString(border.Render(glyphs[4] + strings.Repeat(glyphs[1], w-2) + glyphs[5]))
	return b.String()
}

// blank returns h lines of w spaces.
func blank(w, h int) string {
	if h <= 0 {
		return ""
	}
	line := strings.Repeat(" ", max(w, 0))
	return strings.TrimSuffix(strings.Repeat(line+"\n", h), "\n")
}

// fit cuts s (which may carry styles) to w cells and pads it with spaces to
// exactly w cells.
func fit(s string, w int) string {
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

// fitLines fits every line of s to w cells and returns exactly h lines.
func fitLines(s string, w, h int) string {
	if h <= 0 {
		return ""
	}
	lines := strings.Split(s, "\n")
	out := make([]string, h)
	for i := range out {
		if i < len(lines) {
			out[i] = fit(lines[i], w)
		} else {
			out[i] = strings.Repeat(" ", max(w, 0))
		}
	}
	return strings.Join(out, "\n")
}

// sanitize makes a line of program output safe to draw: escape sequences and
// control characters are removed and tabs expanded, so a strategy's output
// cannot move the cursor or restyle the screen.
func sanitize(s string) string { return termtext.Line(s) }

// sparkGlyphs are the eight heights of a sparkline cell.
const sparkGlyphs = "▁▂▃▄▅▆▇█"

// sparkline draws the last w values on a log scale between their minimum
// and maximum: hook durations have rare outliers that a linear scale would
// turn into one tall bar over a flat line.
func sparkline(vals []float64, w int) string {
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
	glyphs := []rune(sparkGlyphs)
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

// fmtLimit formats a time limit: whole seconds stay whole.
func fmtLimit(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int(d/time.Second))
	}
	return units.Duration(d)
}

// fmtTime formats an event time as every surface writes it (the failure
// pane, --ci, status): RFC 3339 in UTC.
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format(time.RFC3339Nano)
}
