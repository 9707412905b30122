package sweepview

import (
	"fmt"
	"math"
	"strconv"

	"stratbench/sweep"
	"stratbench/themes"
	"stratbench/ui/components"
)

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

// heatmapView draws the heatmap of the objective in w×h.
func (m *sweepModel) heatmapView(th themes.Theme, w, h int) string {
	if m.xAxis < 0 {
		return th.Muted.Render("the sweep sweeps no param: one run")
	}
	return m.heatmap(w, h).Render(th, w, h)
}

// heatmap lays out the heatmap of the objective for w×h (the sweep sweeps
// a param).
func (m *sweepModel) heatmap(w, h int) components.Heatmap {
	fold := -1
	if m.start.Folds != nil {
		fold = m.fold
	}
	phase := sweep.PhaseNone
	if fold >= 0 {
		phase = sweep.PhaseTrain
	}
	var held sweep.Params
	best := m.best()
	if best != nil {
		held = best.r.Params
	}
	grid := m.start.Doc.Spec.Grid
	cells := len(grid[m.xAxis].Values)
	if m.yAxis >= 0 {
		cells *= len(grid[m.yAxis].Values)
	}
	// The runs of the heatmap's fold and phase (not nil), while fewer than
	// the plane's cells; nil past that: the cells are looked up instead.
	runs := []*sweepRun{}
	for i := range m.runs {
		if k := m.runs[i].key; k.fold == fold && k.phase == phase {
			if len(runs) == cells {
				runs = nil
				break
			}
			runs = append(runs, &m.runs[i])
		}
	}
	find := func(p sweep.Params) *sweepRun {
		if i, ok := m.cells[cellKey{fold: fold, phase: phase, params: p.String()}]; ok {
			return &m.runs[i]
		}
		return nil
	}
	// A cell is at least 3 wide and the window at most h high: the
	// render's window lies inside one of w/3 × h.
	var selected *sweepRun
	if len(m.ranked) > 0 {
		selected = &m.runs[m.ranked[m.selected]]
	}
	hm := buildHeatmap(grid, m.xAxis, m.yAxis, held, m.obj, runs, find, m.start.Planned, best, selected, max(w/3, 1), max(h, 1))
	hm.NoRun, hm.NotPlanned = m.emptyWords()
	return hm
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

// buildHeatmap lays out the objective over grid[x] × grid[y] (y < 0: one
// row), the other params held at held's values (their first values when
// held lacks them). Its cells are the runs (of the heatmap's fold and
// phase) whose other params are held's, found by placing each of runs
// or, when runs is nil, by looking up each cell of the plane (find): the
// caller gives runs only when they are fewer than the cells, so that
// a million-cell plane of a sample costs its runs, a plane of 400 cells
// of a sweep of 100,000 runs its cells. The range of the values and the
// best cell are the whole plane's; the cells themselves, and whether the
// plan leaves an empty one out (planned, when not nil), are laid out in a
// window of at most maxCols × maxRows around the best cell only.
func buildHeatmap(grid sweep.Grid, x, y int, held sweep.Params, obj sweep.Objective, runs []*sweepRun,
	find func(sweep.Params) *sweepRun, planned func(sweep.Params) bool, bestRun, selected *sweepRun, maxCols, maxRows int) components.Heatmap {
	xs, ys := grid[x].Values, []any{nil}
	hm := components.Heatmap{XName: grid[x].Name, XLabels: labels(xs), YLabels: []string{""}, Minimize: obj.Minimize, Lo: math.Inf(1), Hi: math.Inf(-1)}
	if y >= 0 {
		ys = grid[y].Values
		hm.YName, hm.YLabels = grid[y].Name, labels(ys)
	}
	var heldParams sweep.Params
	base := make(sweep.Params, len(grid))
	for i, ax := range grid {
		v := ax.Values[0]
		if hv, ok := held.Get(ax.Name); ok {
			v = hv
		}
		base[i] = sweep.Param{Name: ax.Name, Value: v}
		if i != x && i != y {
			heldParams = append(heldParams, base[i])
		}
	}
	at := func(xi, yi int) sweep.Params {
		p := append(sweep.Params(nil), base...)
		p[x].Value = xs[xi]
		if y >= 0 {
			p[y].Value = ys[yi]
		}
		return p
	}
	type pos struct{ y, x int }
	onPlane := map[pos]*sweepRun{}
	if runs == nil {
		for yi := range ys {
			for xi := range xs {
				if r := find(at(xi, yi)); r != nil {
					onPlane[pos{yi, xi}] = r
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
		xAt, yAt := positions(grid[x]), map[any]int{}
		if y >= 0 {
			yAt = positions(grid[y])
		}
		for _, r := range runs {
			v, _ := r.r.Params.Get(grid[x].Name)
			xi, ok := xAt[v]
			if !ok {
				continue
			}
			yi := 0
			if y >= 0 {
				v, _ := r.r.Params.Get(grid[y].Name)
				if yi, ok = yAt[v]; !ok {
					continue
				}
			}
			if _, dup := onPlane[pos{yi, xi}]; !dup && at(xi, yi).String() == r.key.params {
				onPlane[pos{yi, xi}] = r
			}
		}
	}
	// The best as the list ranks it: the best value, of equal ones the
	// lower index (the run the list puts first and marks ★).
	var best pos
	var planeBest *sweepRun
	for here, r := range onPlane {
		if !r.ok {
			continue
		}
		hm.Lo, hm.Hi, hm.Any = math.Min(hm.Lo, r.value), math.Max(hm.Hi, r.value), true
		if planeBest == nil {
			best, planeBest = here, r
			continue
		}
		better := r.value > planeBest.value
		if hm.Minimize {
			better = r.value < planeBest.value
		}
		if better || r.value == planeBest.value && r.r.Index < planeBest.r.Index {
			best, planeBest = here, r
		}
	}
	hm.BestX, hm.BestY = best.x, best.y
	hm.X0, hm.Y0 = components.WindowStart(len(xs), maxCols, best.x), components.WindowStart(len(ys), maxRows, best.y)
	nx, ny := min(len(xs), maxCols), min(len(ys), maxRows)
	hm.Cells, hm.PlanKnown = make([][]components.Cell, ny), planned != nil
	for yi := range ny {
		hm.Cells[yi] = make([]components.Cell, nx)
		for xi := range nx {
			r := onPlane[pos{hm.Y0 + yi, hm.X0 + xi}]
			c := components.Cell{Kind: components.CellNoRun}
			switch {
			case r == nil && planned != nil && !planned(at(hm.X0+xi, hm.Y0+yi)):
				c.Kind = components.CellOut
			case r == nil:
			case r.r.Status != sweep.RunPassed:
				c.Kind = components.CellFailed
			case !r.ok:
				c.Kind = components.CellNoMetric
			default:
				c.Kind, c.Value = components.CellValue, r.value
			}
			c.Best, c.Selected = r != nil && r == bestRun, r != nil && r == selected
			hm.Cells[yi][xi] = c
		}
	}
	if len(heldParams) > 0 {
		what := "held at the best run's: "
		if bestRun == nil {
			what = "held at the first values (no best run yet): "
		}
		hm.Held = what + heldParams.String()
	}
	return hm
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
