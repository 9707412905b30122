package components

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"stratbench/internal/units"
	"stratbench/themes"
)

// Heatmap is a value over two axes (the objective over two swept params),
// laid out for drawing: the labels, a window of its cells, the range of
// its values and what its marks mean.
type Heatmap struct {
	XName, YName string   // the axes' names; YName "" for one row
	XLabels      []string // the x values' labels
	YLabels      []string // the y values' labels; one "" for one row
	Cells        [][]Cell // [y][x] from (Y0, X0): the window laid out
	X0, Y0       int      // where the window laid out starts
	BestX, BestY int      // the best cell's position (0, 0 without one)
	Held         string   // the line that says what the other axes are held at, or ""
	PlanKnown    bool     // told which combinations the plan leaves out
	NoRun        string   // what a cell without a result is
	NotPlanned   string   // what a cell the plan leaves out is
	Lo, Hi       float64  // the range of the values shown
	Minimize     bool     // lower values are better
	Any          bool     // some cell has a value
}

// CellKind is what a heatmap cell holds.
type CellKind int

const (
	CellNoRun    CellKind = iota // no result (yet, or unrun)
	CellOut                      // a combination the plan leaves out
	CellFailed                   // a failed run
	CellNoMetric                 // a run that passed without the value
	CellValue                    // a run's value
)

// Cell is one cell of a heatmap.
type Cell struct {
	Kind     CellKind
	Value    float64 // with CellValue
	Best     bool    // the best run's, marked ★
	Selected bool    // the selected run's, marked ◂
}

// Shades are the heatmap's levels, worst to best: the characters carry
// the level without colour (NO_COLOR); with colour each has its own.
var Shades = []string{"░", "▒", "▓", "█"}

// shadeColours is a sequential ramp (viridis), one per shade.
var shadeColours = []string{"#3b528b", "#21918c", "#5ec962", "#fde725"}

// Level returns the shade of value v, from 0 (worst) to len(Shades)-1.
func (hm Heatmap) Level(v float64) int {
	n := len(Shades)
	if hm.Hi <= hm.Lo {
		return n - 1
	}
	f := (v - hm.Lo) / (hm.Hi - hm.Lo)
	if hm.Minimize {
		f = 1 - f
	}
	return min(int(f*float64(n)), n-1)
}

// Bound returns the value range of shade level l, as the legend says it.
func (hm Heatmap) Bound(l int) (from, to float64) {
	n := float64(len(Shades))
	a := hm.Lo + (hm.Hi-hm.Lo)*float64(l)/n
	b := hm.Lo + (hm.Hi-hm.Lo)*float64(l+1)/n
	if hm.Minimize {
		a = hm.Hi - (hm.Hi-hm.Lo)*float64(l+1)/n
		b = hm.Hi - (hm.Hi-hm.Lo)*float64(l)/n
	}
	return a, b
}

// Render draws the heatmap in w×h: the y values down the left, the x
// values along the bottom, the legend, and the held params.
func (hm Heatmap) Render(th themes.Theme, w, h int) string {
	plain := th.Name == "plain"
	yLabels := make([]string, len(hm.YLabels))
	labelW := 0
	for i, v := range hm.YLabels {
		yLabels[i] = Clip(Sanitize(v), 8)
		labelW = max(labelW, ansi.StringWidth(yLabels[i]))
	}
	// Cells as wide as the x labels (at least 3), wider when the width
	// allows, up to 8.
	cellW := 3
	for _, v := range hm.XLabels {
		cellW = max(cellW, min(ansi.StringWidth(v), 6)+1)
	}
	cellW = max(cellW, min((w-labelW-1)/max(len(hm.XLabels), 1), 8))
	// What fits: rows below the legend lines, columns right of the labels.
	cols := max((w-labelW-1)/cellW, 1)
	// The rows left by the y title, the x labels, the legend and the
	// held params (and the line that says what is shown, when not all).
	// The values come first: when they do not fit, the shade ranges'
	// wrapped lines go (their first stays), then rows.
	// The room is reckoned with the marks of the whole window laid out
	// (the most there can be); the legend drawn names the marks of the
	// cells drawn, a window inside it, so it fits in that room.
	held := ""
	if hm.Held != "" {
		held = th.Muted.Render(Sanitize(hm.Held))
	}
	shadeLines := hm.shadeLegend(th, plain, w)
	marks := hm.markLegend(th, w, hm.MarksIn(0, 0, len(hm.Cells[0]), len(hm.Cells)), held)
	avail := h - 1
	if hm.YName != "" {
		avail--
	}
	for len(shadeLines) > 1 && min(len(hm.YLabels), avail)+len(shadeLines)+len(marks) > avail {
		shadeLines = shadeLines[:len(shadeLines)-1]
	}
	rows := min(len(hm.YLabels), avail-len(shadeLines)-len(marks))
	if rows < len(hm.YLabels) {
		rows-- // for the line that says what is shown
	}
	rows = max(rows, 1)
	// Around the best, inside the window laid out (which is at least as
	// large: buildHeatmap's bounds).
	x0 := min(max(WindowStart(len(hm.XLabels), cols, hm.BestX), hm.X0), hm.X0+len(hm.Cells[0])-min(cols, len(hm.XLabels)))
	y0 := min(max(WindowStart(len(hm.YLabels), rows, hm.BestY), hm.Y0), hm.Y0+len(hm.Cells)-min(rows, len(hm.YLabels)))
	marks = hm.markLegend(th, w, hm.MarksIn(x0-hm.X0, y0-hm.Y0, min(cols, len(hm.XLabels)), min(rows, len(hm.YLabels))), held)
	tail := append(shadeLines, marks...)
	var lines []string
	if hm.YName != "" {
		lines = append(lines, th.Muted.Render(fmt.Sprintf("%*s ↓ %s", labelW, "", Clip(Sanitize(hm.YName), w-labelW-3))))
	}
	for yi := y0; yi < len(hm.YLabels) && yi < y0+rows; yi++ {
		var b strings.Builder
		b.WriteString(th.Muted.Render(fmt.Sprintf("%*s ", labelW, yLabels[yi])))
		for xi := x0; xi < len(hm.XLabels) && xi < x0+cols; xi++ {
			b.WriteString(hm.cell(th, hm.Cells[yi-hm.Y0][xi-hm.X0], cellW, plain))
		}
		lines = append(lines, b.String())
	}
	var xl strings.Builder
	xl.WriteString(strings.Repeat(" ", labelW+1))
	for xi := x0; xi < len(hm.XLabels) && xi < x0+cols; xi++ {
		xl.WriteString(fmt.Sprintf("%-*s", cellW, Clip(Sanitize(hm.XLabels[xi]), cellW-1)))
	}
	lines = append(lines, th.Muted.Render(xl.String())+th.Muted.Render("→ "+Sanitize(hm.XName)))
	if shown := min(cols, len(hm.XLabels)) * min(rows, len(hm.YLabels)); shown < len(hm.XLabels)*len(hm.YLabels) {
		lines = append(lines, th.Muted.Render(fmt.Sprintf("showing %d of %d × %d, around the best", shown, len(hm.XLabels), len(hm.YLabels))))
	}
	lines = append(lines, tail...)
	return strings.Join(lines, "\n")
}

// The marks of the best run's and the selected run's cells and of the
// empty ones: glyphs, so that they read the same under NO_COLOR, and none
// of the Shades.
const (
	BestMark       = "★"
	SelectedMark   = "◂"
	NoRunMark      = "·"
	NotPlannedMark = "-"
)

// cell draws one cell: the shade of its value, ✗ for a failed run, · for
// no result (yet, or unrun), - for a combination the plan leaves out;
// the best run's starts with ★, the selected run's ends with ◂ in the
// selection's style.
func (hm Heatmap) cell(th themes.Theme, c Cell, w int, plain bool) string {
	end := " "
	if c.Selected {
		end = SelectedMark
	}
	var s string
	style := th.Muted
	switch c.Kind {
	case CellOut:
		s = fmt.Sprintf("%-*s", w, NotPlannedMark)
	case CellNoRun:
		s = fmt.Sprintf("%-*s", w, NoRunMark)
	case CellFailed:
		s, style = fmt.Sprintf("%-*s", w-1, "✗")+end, th.Fail
	case CellNoMetric:
		s = fmt.Sprintf("%-*s", w-1, "?") + end
	default:
		l := hm.Level(c.Value)
		s = strings.Repeat(Shades[l], w-1) + end
		if c.Best {
			s = BestMark + strings.Repeat(Shades[l], w-2) + end
		}
		style = lipgloss.NewStyle()
		if !plain {
			style = style.Foreground(lipgloss.Color(shadeColours[l]))
		}
	}
	if c.Selected {
		style = th.Selected
	}
	return style.Render(s)
}

// CellMarks says which of the marks besides the Shades some cells of a
// window of the heatmap have.
type CellMarks struct {
	Selected bool // the selected run's cell
	NoRun    bool // a planned combination without a result
	Out      bool // a combination the plan leaves out
}

// MarksIn returns the marks of the cells of the window of cols × rows
// whose top left cell is (x, y) in hm.Cells.
func (hm Heatmap) MarksIn(x, y, cols, rows int) CellMarks {
	var m CellMarks
	for yi := y; yi < y+rows && yi < len(hm.Cells); yi++ {
		for xi := x; xi < x+cols && xi < len(hm.Cells[yi]); xi++ {
			switch c := hm.Cells[yi][xi]; c.Kind {
			case CellOut:
				m.Out = true
			case CellNoRun:
				m.NoRun = true
			default:
				m.Selected = m.Selected || c.Selected
			}
		}
	}
	return m
}

// shadeLegend says what each shade means, in numbers, in lines of at most
// w cells.
func (hm Heatmap) shadeLegend(th themes.Theme, plain bool, w int) []string {
	if !hm.Any {
		return nil
	}
	var parts []string
	for l := len(Shades) - 1; l >= 0; l-- {
		a, b := hm.Bound(l)
		sh := Shades[l]
		if !plain {
			sh = lipgloss.NewStyle().Foreground(lipgloss.Color(shadeColours[l])).Render(sh)
		}
		parts = append(parts, sh+th.Text.Render(" "+MetricText(a)+"…"+MetricText(b)))
	}
	return wrapParts(parts, w)
}

// markLegend says what the marks that cells have (m) mean, then held (the
// line of the held params, when not ""), in lines of at most w cells.
func (hm Heatmap) markLegend(th themes.Theme, w int, m CellMarks, held string) []string {
	marks := []string{BestMark + " best"}
	if m.Selected {
		marks = append(marks, SelectedMark+" selected")
	}
	// Told the plan, the legend names · only when a cell has it: once a
	// sweep has run every planned combination, "· not run" would name
	// nothing on the plane and take the room of the values.
	if !hm.PlanKnown || m.NoRun {
		marks = append(marks, NoRunMark+" "+hm.NoRun)
	}
	if m.Out {
		marks = append(marks, NotPlannedMark+" "+hm.NotPlanned)
	}
	marks = append(marks, "✗ failed", "? passed without the metric")
	for i := range marks {
		marks[i] = th.Muted.Render(marks[i])
	}
	lines := wrapParts(marks, w)
	if held != "" {
		lines = append(lines, held)
	}
	return lines
}

// wrapParts joins parts with two spaces into lines of at most w cells,
// breaking between parts.
func wrapParts(parts []string, w int) []string {
	var lines []string
	line := ""
	for _, p := range parts {
		switch {
		case line == "":
			line = p
		case ansi.StringWidth(line)+2+ansi.StringWidth(p) <= w:
			line += "  " + p
		default:
			lines = append(lines, line)
			line = p
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// MetricText writes an objective's value with four significant digits
// (a return of 0.0021 is not 0.00), with separators from 1,000 on.
func MetricText(v float64) string {
	if math.Abs(v) >= 1000 || math.IsNaN(v) || math.IsInf(v, 0) {
		return units.Number(v)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
