package components

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"stratbench/internal/units"
	"stratbench/themes"
)

// Heatmap is a value over two axes (the objective over two swept params),
// laid out for drawing: the labels, the window of cells drawn, the range
// of the values, and what its marks mean.
//
// A value's place on the scale is drawn three ways, by what the terminal
// has: a continuous colour gradient behind the cell (256 colours or more),
// or eight levels of a block's height, ▁ to █ (16 colours, coloured; and
// without colour). A cell wide enough shows the value itself too.
type Heatmap struct {
	XName, YName string   // the axes' names; YName "" for one row
	XLabels      []string // the x values' labels
	YLabels      []string // the y values' labels; one "" for one row
	Cells        [][]Cell // [y][x]: the window drawn, from (X0, Y0)
	X0, Y0       int      // the window's first column and row
	Held         string   // the line that says what the other axes are held at, or ""
	PlanKnown    bool     // told which combinations the plan leaves out
	NoRun        string   // what a cell without a result is
	NotPlanned   string   // what a cell the plan leaves out is
	Lo, Hi       float64  // the range of the values on the whole plane
	Minimize     bool     // lower values are better
	Any          bool     // some cell of the plane has a value
	Scale        Scale    // how values are drawn
}

// Scale is how a heatmap draws a value's place between Lo and Hi.
type Scale int

const (
	// ScaleLevels draws eight levels of a block's height, without colour
	// (NO_COLOR).
	ScaleLevels Scale = iota
	// ScaleLevels16 draws the levels in eight of the 16 ANSI colours.
	ScaleLevels16
	// ScaleGradient draws a continuous gradient behind each cell.
	ScaleGradient
)

// ScaleFor returns the scale a terminal of profile p draws with; noColor
// (the plain theme) draws without colour whatever the profile.
func ScaleFor(p colorprofile.Profile, noColor bool) Scale {
	switch {
	case noColor || p < colorprofile.ANSI:
		return ScaleLevels
	case p < colorprofile.ANSI256:
		return ScaleLevels16
	}
	return ScaleGradient
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

// The marks of the best run's and the selected run's cells and of the
// empty ones: glyphs, so that they read the same under NO_COLOR, and none
// of the levels.
const (
	BestMark       = "★"
	SelectedMark   = "◂"
	NoRunMark      = "·"
	NotPlannedMark = "-"
	FailedMark     = "✗"
	NoMetricMark   = "?"
)

// Levels are the heights a value's place is drawn with, worst to best.
var Levels = []string{"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"}

// levelColours are the ANSI colours of the levels on a 16-colour
// terminal, worst to best: blue, cyan, green, yellow, each dim then bright.
var levelColours = []string{"4", "12", "6", "14", "2", "10", "3", "11"}

// gradient is a sequential ramp (viridis), worst to best, that the
// gradient interpolates.
var gradient = [][3]float64{
	{0x44, 0x01, 0x54}, {0x48, 0x28, 0x78}, {0x3e, 0x49, 0x89}, {0x31, 0x68, 0x8e}, {0x26, 0x82, 0x8e},
	{0x1f, 0x9e, 0x89}, {0x35, 0xb7, 0x79}, {0x6e, 0xce, 0x58}, {0xb5, 0xde, 0x2b}, {0xfd, 0xe7, 0x25},
}

// Place returns where v lies between the worst and the best value, from 0
// (worst) to 1 (best); 1 when every value is the same.
func (hm Heatmap) Place(v float64) float64 {
	if hm.Hi <= hm.Lo {
		return 1
	}
	f := min(max((v-hm.Lo)/(hm.Hi-hm.Lo), 0), 1)
	if hm.Minimize {
		f = 1 - f
	}
	return f
}

// Level returns the level of value v, from 0 (worst) to len(Levels)-1.
func (hm Heatmap) Level(v float64) int {
	n := len(Levels)
	return min(int(hm.Place(v)*float64(n)), n-1)
}

// colourAt is the gradient's colour at place f (0 worst, 1 best), and
// whether text on it reads best in black.
func colourAt(f float64) (bg color.Color, darkText bool) {
	x := f * float64(len(gradient)-1)
	i := min(int(x), len(gradient)-2)
	t := x - float64(i)
	var rgb [3]uint8
	for k := range rgb {
		rgb[k] = uint8(math.Round(gradient[i][k] + (gradient[i+1][k]-gradient[i][k])*t))
	}
	luma := 0.2126*float64(rgb[0]) + 0.7152*float64(rgb[1]) + 0.0722*float64(rgb[2])
	return color.RGBA{R: rgb[0], G: rgb[1], B: rgb[2], A: 0xff}, luma > 140
}

// Zoom levels: the widths of a cell, narrowest first. A value shows in a
// cell of valueWidth or more.
var zoomWidths = []int{3, 5, 7, 9, 12, 15}

const (
	autoMaxWidth = 9 // the widest cell the automatic zoom gives
	valueWidth   = 5 // a cell shows values from this width on
	maxLabelW    = 8 // the widest y label
)

// Geometry is how a heatmap fits in a pane: its cells' width and how many
// columns and rows of cells it shows.
type Geometry struct {
	CellW, Cols, Rows int
	labelW            int
	legend            int // lines of the legend reckoned
}

// Fit lays the heatmap out in w×h at zoom (0: the widest cells up to
// autoMaxWidth that show every column; else a cell width). The room for
// the legend is reckoned with every mark it can name, so that the rows do
// not depend on the window.
func (hm Heatmap) Fit(w, h, zoom int) Geometry {
	g := Geometry{}
	for _, l := range hm.YLabels {
		g.labelW = max(g.labelW, ansi.StringWidth(Clip(Sanitize(l), maxLabelW)))
	}
	avail := max(w-g.labelW-1, 1)
	switch {
	case zoom > 0:
		g.CellW = zoom
	default:
		g.CellW = min(max(avail/max(len(hm.XLabels), 1), zoomWidths[0]), autoMaxWidth)
	}
	g.Cols = min(max(avail/g.CellW, 1), len(hm.XLabels))
	marks := CellMarks{Selected: true, NoRun: true, Out: hm.PlanKnown}
	g.legend = len(hm.scaleLegend(themes.Plain(), w)) + len(hm.markLegend(themes.Plain(), w, marks))
	if hm.Held != "" {
		g.legend++
	}
	rows := h - 1 - g.legend // the x labels
	if hm.YName != "" {
		rows--
	}
	if rows < len(hm.YLabels) || g.Cols < len(hm.XLabels) {
		rows-- // the line that says which part is shown
	}
	g.Rows = min(max(rows, 1), len(hm.YLabels))
	return g
}

// ZoomIn returns the next wider cell width than w; ZoomOut the next
// narrower one (w itself at either end).
func ZoomIn(w int) int {
	for _, z := range zoomWidths {
		if z > w {
			return z
		}
	}
	return w
}

// ZoomOut returns the next narrower cell width than w (w at the end).
func ZoomOut(w int) int {
	for i := len(zoomWidths) - 1; i >= 0; i-- {
		if zoomWidths[i] < w {
			return zoomWidths[i]
		}
	}
	return w
}

// Render draws the heatmap in w×h as g lays it out: the y values down the
// left, the x values along the bottom, which part is shown when not all,
// the scale, the marks, and the held params.
func (hm Heatmap) Render(th themes.Theme, w, h int, g Geometry) string {
	var lines []string
	if hm.YName != "" {
		lines = append(lines, th.Muted.Render(fmt.Sprintf("%*s ↓ %s", g.labelW, "", Clip(Sanitize(hm.YName), max(w-g.labelW-3, 1)))))
	}
	rows, cols := min(g.Rows, len(hm.Cells)), 0
	if rows > 0 {
		cols = min(g.Cols, len(hm.Cells[0]))
	}
	for yi := range rows {
		var b strings.Builder
		b.WriteString(th.Muted.Render(fmt.Sprintf("%*s ", g.labelW, Clip(Sanitize(hm.YLabels[hm.Y0+yi]), maxLabelW))))
		for xi := range cols {
			b.WriteString(hm.cell(th, hm.Cells[yi][xi], g.CellW))
		}
		lines = append(lines, b.String())
	}
	lines = append(lines, th.Muted.Render(hm.xLabels(g, cols)+"→ "+Sanitize(hm.XName)))
	if nx, ny := len(hm.XLabels), len(hm.YLabels); cols < nx || rows < ny {
		lines = append(lines, th.Muted.Render(shownText(hm.X0, cols, nx, hm.Y0, rows, ny)))
	}
	lines = append(lines, hm.scaleLegend(th, w)...)
	lines = append(lines, hm.markLegend(th, w, hm.MarksIn(0, 0, cols, rows))...)
	if hm.Held != "" {
		lines = append(lines, th.Muted.Render(Sanitize(hm.Held)))
	}
	return strings.Join(lines, "\n")
}

// shownText says which columns and rows of the plane are shown, and the
// keys that show the rest.
func shownText(x0, cols, nx, y0, rows, ny int) string {
	span := func(from, n, of int) string {
		if n >= of {
			return fmt.Sprintf("all %d", of)
		}
		return fmt.Sprintf("%d–%d of %d", from+1, from+n, of)
	}
	text := "x " + span(x0, cols, nx)
	if ny > 1 {
		text += ", y " + span(y0, rows, ny)
	}
	return text + " (H J K L pan, + - zoom)"
}

// xLabels writes the x values under their columns, each from its
// column's first cell. A label is cut to its cell; under cells too narrow
// to read one, a label runs on into the next columns, which go without.
func (hm Heatmap) xLabels(g Geometry, cols int) string {
	maxW := g.CellW - 1
	if maxW < 4 {
		maxW = maxLabelW
	}
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", g.labelW+1))
	at := 0 // cells written after the labels' margin
	for xi := range cols {
		start := xi * g.CellW
		if start < at {
			continue
		}
		label := Clip(Sanitize(hm.XLabels[hm.X0+xi]), maxW)
		b.WriteString(strings.Repeat(" ", start-at) + label + " ")
		at = start + ansi.StringWidth(label) + 1
	}
	if end := cols * g.CellW; at < end {
		b.WriteString(strings.Repeat(" ", end-at))
	}
	return b.String()
}

// ValueText writes v in at most w cells, with as many significant digits
// as fit (four at most); ok is false when no writing of it fits.
func ValueText(v float64, w int) (string, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		s := MetricText(v)
		return s, ansi.StringWidth(s) <= w
	}
	if math.Abs(v) >= 1000 {
		for _, u := range []struct {
			div  float64
			unit string
		}{{1e3, "k"}, {1e6, "M"}, {1e9, "G"}, {1e12, "T"}} {
			if s := strconv.FormatFloat(v/u.div, 'f', 1, 64) + u.unit; math.Abs(v/u.div) < 1000 && len(s) <= w {
				return s, true
			}
			if s := strconv.FormatFloat(v/u.div, 'f', 0, 64) + u.unit; math.Abs(v/u.div) < 1000 && len(s) <= w {
				return s, true
			}
		}
		return "", false
	}
	for p := 4; p >= 1; p-- {
		s := strconv.FormatFloat(v, 'g', p, 64)
		if strings.ContainsRune(s, 'e') {
			// Below 1e-4: fixed notation, as far as it goes.
			s = strconv.FormatFloat(v, 'f', max(w-2, 0), 64)
		}
		if len(s) <= w {
			return s, true
		}
	}
	return "", false
}

// cell draws one cell of w cells: its lead (★ for the best run's; the
// level under the levels scale), its body (the value when it fits, or
// the level), and its trail (◂ for the selected run's). ✗ is a failed
// run, · no result (yet, or unrun), - a combination the plan leaves out,
// ? a run that passed without the value.
func (hm Heatmap) cell(th themes.Theme, c Cell, w int) string {
	trail := " "
	if c.Selected {
		trail = th.Selected.Render(SelectedMark)
	}
	switch c.Kind {
	case CellOut:
		return th.Muted.Render(fmt.Sprintf("%-*s", w, NotPlannedMark))
	case CellNoRun:
		return th.Muted.Render(fmt.Sprintf("%-*s", w, NoRunMark))
	case CellFailed:
		return th.Fail.Render(fmt.Sprintf("%-*s", w-1, FailedMark)) + trail
	case CellNoMetric:
		return th.Muted.Render(fmt.Sprintf("%-*s", w-1, NoMetricMark)) + trail
	}
	level := Levels[hm.Level(c.Value)]
	lead := level
	if hm.Scale == ScaleGradient {
		lead = " "
	}
	if c.Best {
		lead = BestMark
	}
	bodyW := w - 2
	body := strings.Repeat(level, max(bodyW, 0))
	if hm.Scale == ScaleGradient {
		body = strings.Repeat(" ", max(bodyW, 0))
	}
	if w >= valueWidth {
		// A space at least between the lead and the value.
		if s, ok := ValueText(c.Value, bodyW-1); ok {
			body = fmt.Sprintf("%*s", bodyW, s)
		}
	}
	style := lipgloss.NewStyle()
	switch hm.Scale {
	case ScaleGradient:
		bg, darkText := colourAt(hm.Place(c.Value))
		fg := color.Color(color.White)
		if darkText {
			fg = color.Black
		}
		style = style.Background(bg).Foreground(fg)
	case ScaleLevels16:
		style = style.Foreground(lipgloss.Color(levelColours[hm.Level(c.Value)]))
	}
	if c.Selected {
		style = style.Bold(true)
	}
	return style.Render(lead+body) + trail
}

// CellMarks says which of the marks besides the levels some cells of a
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

// scaleLegend says what the scale means: worst to best, with the values
// at its ends, in lines of at most w cells.
func (hm Heatmap) scaleLegend(th themes.Theme, w int) []string {
	if !hm.Any {
		return nil
	}
	worst, best := hm.Lo, hm.Hi
	if hm.Minimize {
		worst, best = hm.Hi, hm.Lo
	}
	var bar strings.Builder
	switch hm.Scale {
	case ScaleGradient:
		n := min(max(w/4, 8), 24)
		for i := range n {
			bg, _ := colourAt(float64(i) / float64(n-1))
			bar.WriteString(lipgloss.NewStyle().Background(bg).Render(" "))
		}
	default:
		for l, g := range Levels {
			if hm.Scale == ScaleLevels16 {
				g = lipgloss.NewStyle().Foreground(lipgloss.Color(levelColours[l])).Render(g)
			}
			bar.WriteString(g)
		}
	}
	return wrapParts([]string{th.Text.Render("worst " + MetricText(worst)), bar.String(),
		th.Text.Render(MetricText(best) + " best")}, w, " ")
}

// markLegend says what the marks that cells have (m) mean, in lines of at
// most w cells.
func (hm Heatmap) markLegend(th themes.Theme, w int, m CellMarks) []string {
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
	marks = append(marks, FailedMark+" failed", NoMetricMark+" passed without the metric")
	for i := range marks {
		marks[i] = th.Muted.Render(marks[i])
	}
	return wrapParts(marks, w, "  ")
}

// wrapParts joins parts with sep into lines of at most w cells, breaking
// between parts.
func wrapParts(parts []string, w int, sep string) []string {
	var lines []string
	line := ""
	for _, p := range parts {
		switch {
		case line == "":
			line = p
		case ansi.StringWidth(line)+ansi.StringWidth(sep)+ansi.StringWidth(p) <= w:
			line += sep + p
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
