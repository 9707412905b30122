package sweepview

import (
	"fmt"
	"math"
	"strconv"

	"stratbench/sweep"
	"stratbench/themes"
	"stratbench/ui/components"
)

// The heatmap: the objective over two swept params (the x and y axes),
// the others held at the selected run's values, so that the selected run
// is on it, marked and kept in view; the window drawn follows it until
// the user pans (H J K L, shift+arrows), and c brings it back. + and -
// zoom: wider cells show the values, narrower ones more of the plane.

func (m *sweepModel) heatmapTitle() string {
	grid := m.start.Doc.Spec.Grid
	switch {
	case m.xAxis < 0:
		return "heatmap (nothing swept)"
	case m.yAxis < 0:
		return "heatmap: " + m.obj.Metric + " over " + grid[m.xAxis].Name
	}
	return fmt.Sprintf("heatmap: %s over %s (x) × %s (y)", m.obj.Metric, grid[m.xAxis].Name, grid[m.yAxis].Name)
}

// heatState is the heatmap's window: where it starts, and whether it
// follows the selected run.
type heatState struct {
	zoom   int  // the cell width chosen with + and -; 0: the widest that shows every column, up to 8
	x0, y0 int  // the window's first column and row
	placed bool // x0 and y0 are set; else the window is centred on the selected run
	panned bool // the user moved the window: it stays where it is until c or a new selection
}

// recentre makes the window centre on the selected run at the next draw.
func (s *heatState) recentre() { s.placed, s.panned = false, false }

// window places the window of cols × rows on a plane of nx × ny so that
// the focus is in it: centred the first time, then moved only as far as
// it takes (not at all once panned).
func (s *heatState) window(nx, ny, cols, rows int, focus pos) (x0, y0 int) {
	follow := func(start, size, at int) int {
		if at < start {
			return at
		}
		if at >= start+size {
			return at - size + 1
		}
		return start
	}
	switch {
	case !s.placed:
		s.x0, s.y0 = components.WindowStart(nx, cols, focus.x), components.WindowStart(ny, rows, focus.y)
		s.placed = true
	case !s.panned:
		s.x0, s.y0 = follow(s.x0, cols, focus.x), follow(s.y0, rows, focus.y)
	}
	s.x0 = min(max(s.x0, 0), max(nx-cols, 0))
	s.y0 = min(max(s.y0, 0), max(ny-rows, 0))
	return s.x0, s.y0
}

// heatmapView draws the heatmap of the objective in w×h.
func (m *sweepModel) heatmapView(th themes.Theme, w, h int) string {
	if m.xAxis < 0 {
		return th.Muted.Render("the sweep sweeps no param: one run")
	}
	hm, g := m.heatmap(th, w, h)
	return hm.Render(th, w, h, g)
}

// heatmap lays the heatmap out for w×h (the sweep sweeps a param): the
// plane, the window the state puts over it, and that window's cells.
func (m *sweepModel) heatmap(th themes.Theme, w, h int) (components.Heatmap, components.Geometry) {
	p := m.plane()
	hm := components.Heatmap{XName: p.grid[p.x].Name, XLabels: labels(p.xs), YLabels: []string{""}, Held: p.heldText(),
		PlanKnown: m.start.Planned != nil, Lo: p.lo, Hi: p.hi, Minimize: m.obj.Minimize, Any: p.any,
		Scale: components.ScaleFor(m.profile, th.Name == "plain")}
	if p.y >= 0 {
		hm.YName, hm.YLabels = p.grid[p.y].Name, labels(p.ys)
	}
	hm.NoRun, hm.NotPlanned = m.emptyWords()
	g := hm.Fit(w, h, m.heat.zoom)
	hm.X0, hm.Y0 = m.heat.window(len(p.xs), len(p.ys), g.Cols, g.Rows, p.focus)
	hm.Cells = p.cells(hm.X0, hm.Y0, g.Cols, g.Rows, m.best(), m.selectedRun(), m.start.Planned)
	return hm, g
}

// heatGeometry is how the heatmap fits in its pane now: for the keys that
// pan and zoom it.
func (m *sweepModel) heatGeometry() components.Geometry {
	if m.xAxis < 0 {
		return components.Geometry{}
	}
	w, h := m.heatSize(m.width, m.sweepBodyHeight())
	_, g := m.heatmap(m.theme, w, h)
	return g
}

// pan moves the heatmap's window by half of it, dx columns and dy rows
// each a half; it then stays where it is put.
func (m *sweepModel) pan(dx, dy int) {
	g := m.heatGeometry()
	m.heat.x0 += dx * max(g.Cols/2, 1)
	m.heat.y0 += dy * max(g.Rows/2, 1)
	m.heat.placed, m.heat.panned = true, true
}

// zoom widens (in) or narrows the heatmap's cells by a step, and centres
// it on the selected run again.
func (m *sweepModel) zoom(in bool) {
	w := m.heatGeometry().CellW
	if in {
		m.heat.zoom = components.ZoomIn(w)
	} else {
		m.heat.zoom = components.ZoomOut(w)
	}
	m.heat.recentre()
}

// selectedRun is the run selected in the list, or nil.
func (m *sweepModel) selectedRun() *sweepRun {
	if len(m.ranked) == 0 {
		return nil
	}
	return &m.runs[m.ranked[m.selected]]
}

// pos is a cell of the plane.
type pos struct{ y, x int }

// plane is the objective over grid[x] × grid[y] (y < 0: one row), the
// other params held: the runs on it by position.
type plane struct {
	grid   sweep.Grid
	x, y   int
	xs, ys []any
	base   sweep.Params // every param: the held ones at their values
	held   sweep.Params // the held ones
	heldBy string       // whose values they are
	runs   map[pos]*sweepRun
	lo, hi float64 // the range of the plane's values
	any    bool    // some run on the plane has a value
	focus  pos     // the cell kept in view: the selected run's, else the best's
}

// at returns the params of the plane's cell (xi, yi).
func (p *plane) at(xi, yi int) sweep.Params {
	q := append(sweep.Params(nil), p.base...)
	q[p.x].Value = p.xs[xi]
	if p.y >= 0 {
		q[p.y].Value = p.ys[yi]
	}
	return q
}

// heldText says what the other params are held at.
func (p *plane) heldText() string {
	if len(p.held) == 0 {
		return ""
	}
	return "held at " + p.heldBy + ": " + p.held.String()
}

// plane lays out the plane the heatmap shows: the runs of its fold and
// phase whose other params are the selected run's (the best's when it is
// selected; the first values before any run). Its cells are found by
// placing each run of the fold and phase or, when there are more of them
// than the plane has cells, by looking up each cell: a million-cell plane
// of a sample costs its runs, a plane of 400 cells of a sweep of 100,000
// runs its cells.
func (m *sweepModel) plane() plane {
	fold := -1
	if m.start.Folds != nil {
		fold = m.fold
	}
	phase := sweep.PhaseNone
	if fold >= 0 {
		phase = sweep.PhaseTrain
	}
	grid := m.start.Doc.Spec.Grid
	p := plane{grid: grid, x: m.xAxis, y: m.yAxis, xs: grid[m.xAxis].Values, ys: []any{nil}, runs: map[pos]*sweepRun{},
		lo: math.Inf(1), hi: math.Inf(-1), heldBy: "the first values (no best run yet)"}
	if p.y >= 0 {
		p.ys = grid[p.y].Values
	}
	var heldAt sweep.Params
	best, selected := m.best(), m.selectedRun()
	switch {
	case selected != nil && selected == best:
		heldAt, p.heldBy = best.r.Params, "the best run's"
	case selected != nil:
		heldAt, p.heldBy = selected.r.Params, fmt.Sprintf("the selected run's (#%d)", selected.r.Index)
	case best != nil:
		heldAt, p.heldBy = best.r.Params, "the best run's"
	}
	p.base = make(sweep.Params, len(grid))
	for i, ax := range grid {
		v := ax.Values[0]
		if hv, ok := heldAt.Get(ax.Name); ok {
			v = hv
		}
		p.base[i] = sweep.Param{Name: ax.Name, Value: v}
		if i != p.x && i != p.y {
			p.held = append(p.held, p.base[i])
		}
	}
	cells := len(p.xs) * len(p.ys)
	// The runs of the plane's fold and phase, while fewer than its cells.
	var runs []*sweepRun
	for i := range m.runs {
		if k := m.runs[i].key; k.fold == fold && k.phase == phase {
			if len(runs) == cells {
				runs = nil
				break
			}
			runs = append(runs, &m.runs[i])
		}
	}
	if runs == nil && len(m.runs) > 0 {
		for yi := range p.ys {
			for xi := range p.xs {
				if i, ok := m.cells[cellKey{fold: fold, phase: phase, params: p.at(xi, yi).String()}]; ok {
					p.runs[pos{yi, xi}] = &m.runs[i]
				}
			}
		}
	} else {
		// Params keep their types (int64, float64, bool, string) live
		// and read back from results.jsonl: a value finds its position.
		positions := func(ax sweep.Axis) map[any]int {
			out := make(map[any]int, len(ax.Values))
			for k, v := range ax.Values {
				out[v] = k
			}
			return out
		}
		xAt, yAt := positions(grid[p.x]), map[any]int{}
		if p.y >= 0 {
			yAt = positions(grid[p.y])
		}
		for _, r := range runs {
			v, _ := r.r.Params.Get(grid[p.x].Name)
			xi, ok := xAt[v]
			if !ok {
				continue
			}
			yi := 0
			if p.y >= 0 {
				v, _ := r.r.Params.Get(grid[p.y].Name)
				if yi, ok = yAt[v]; !ok {
					continue
				}
			}
			if _, dup := p.runs[pos{yi, xi}]; !dup && p.at(xi, yi).String() == r.key.params {
				p.runs[pos{yi, xi}] = r
			}
		}
	}
	// The range is the plane's; the focus the selected run's cell, else
	// the best run's, else the plane's best (of equal values the lower
	// index, as the list ranks them).
	var selectedAt, bestAt, planeBestAt *pos
	var planeBest *sweepRun
	for here, r := range p.runs {
		switch r {
		case selected:
			selectedAt = &here
		case best:
			bestAt = &here
		}
		if !r.ok {
			continue
		}
		p.lo, p.hi, p.any = math.Min(p.lo, r.value), math.Max(p.hi, r.value), true
		better := planeBest == nil || (r.value > planeBest.value) != m.obj.Minimize && r.value != planeBest.value ||
			r.value == planeBest.value && r.r.Index < planeBest.r.Index
		if better {
			planeBest, planeBestAt = r, &here
		}
	}
	for _, at := range []*pos{selectedAt, bestAt, planeBestAt} {
		if at != nil {
			p.focus = *at
			break
		}
	}
	return p
}

// cells returns the plane's cells in the window of cols × rows from
// (x0, y0), marking best's and selected's; planned, when not nil, tells
// a combination the plan leaves out.
func (p *plane) cells(x0, y0, cols, rows int, best, selected *sweepRun, planned func(sweep.Params) bool) [][]components.Cell {
	cols, rows = min(cols, len(p.xs)-x0), min(rows, len(p.ys)-y0)
	out := make([][]components.Cell, max(rows, 0))
	for yi := range out {
		out[yi] = make([]components.Cell, max(cols, 0))
		for xi := range out[yi] {
			r := p.runs[pos{y0 + yi, x0 + xi}]
			c := components.Cell{Kind: components.CellNoRun}
			switch {
			case r == nil && planned != nil && !planned(p.at(x0+xi, y0+yi)):
				c.Kind = components.CellOut
			case r == nil:
			case r.r.Status != sweep.RunPassed:
				c.Kind = components.CellFailed
			case !r.ok:
				c.Kind = components.CellNoMetric
			default:
				c.Kind, c.Value = components.CellValue, r.value
			}
			c.Best, c.Selected = r != nil && r == best, r != nil && r == selected
			out[yi][xi] = c
		}
	}
	return out
}

// emptyWords says what a cell without a result is: noRun for a
// combination the sweep runs, notPlanned for one the constraint or the
// sample left out. While the sweep runs, a planned cell may still get a
// result; once it has ended it will not (a stop left it unrun). When the
// view is not told the plan, every empty cell is noRun, and an ended
// sweep's is named by what could have left it empty.
func (m *sweepModel) emptyWords() (noRun, notPlanned string) {
	spec := m.start.Doc.Spec
	why := ""
	switch {
	case spec.Constraint != nil && spec.Random != nil:
		why = " (constraint or not sampled)"
	case spec.Constraint != nil:
		why = " (constraint)"
	case spec.Random != nil:
		why = " (not sampled)"
	}
	switch {
	case m.state != sweepEnded:
		noRun = "no result yet"
	case m.doc.Status == sweep.StatusStopped:
		noRun = "not run (stopped)"
	case m.start.Planned == nil:
		noRun = "not run" + why
	default:
		noRun = "not run"
	}
	return noRun, "not in the sweep" + why
}

// labels writes an axis's values as --grid takes them.
func labels(values []any) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = valueText(v)
	}
	return out
}

// valueText writes a param value as --grid takes it.
func valueText(v any) string {
	switch v := v.(type) {
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		return v
	}
	return fmt.Sprint(v)
}
