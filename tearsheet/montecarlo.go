package tearsheet

import (
	"fmt"
	"math"

	"stratbench/internal/units"
	"stratbench/job"
)

// The Monte Carlo of a job (`stratbench montecarlo`, kept in its folder):
// the fan of its equity paths and their percentiles, when there is one.

// mcView is the Monte Carlo part of a job's page.
type mcView struct {
	What string     // what was drawn, in words
	Rows [][]string // figure, 5th … 95th percentiles, the job's own
	Loss string     // the probability of a loss
	When string
}

// fanData is the fan chart: at each step (a trade or a bar), the paths'
// percentiles of equity, in the job's money.
type fanData struct {
	X      nums     `json:"x"`
	Y      []nums   `json:"y"` // 5th, 25th, 50th, 75th, 95th
	Labels []string `json:"labels"`
	Of     string   `json:"of"`
}

// monteCarlo is the view and the chart of a job's Monte Carlo result.
func monteCarlo(mc *job.MonteCarlo) (*mcView, *fanData) {
	if mc == nil {
		return nil, nil
	}
	per := "trade"
	if mc.Of == "bars" {
		per = "bar"
	}
	what := map[string]string{
		"trades":    fmt.Sprintf("its %s closed trades in random orders", units.Count(mc.Steps)),
		"bootstrap": fmt.Sprintf("%s trades drawn from its closed trades with replacement", units.Count(mc.Steps)),
		"blocks":    fmt.Sprintf("its %s per-bar returns in blocks of %.1f bars on average (the stationary bootstrap)", units.Count(mc.Steps), mc.MeanBlock),
	}[mc.Method]
	v := &mcView{
		What: fmt.Sprintf("%s paths of %s, seed %d (method %s)", units.Count(mc.Runs), what, mc.Seed, mc.Method),
		Loss: units.Percent(mc.LossProbability),
		When: mc.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC"),
	}
	fig := func(f job.Figure, pct bool) string {
		x := float64(f)
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			return "–"
		case pct:
			return units.Percent(x)
		}
		return fmt.Sprintf("%.4f", x)
	}
	row := func(name string, p job.Percentiles, obs job.Figure, pct bool) []string {
		return []string{name, fig(p.P5, pct), fig(p.P25, pct), fig(p.P50, pct), fig(p.P75, pct), fig(p.P95, pct), fig(obs, pct)}
	}
	v.Rows = [][]string{
		row("total return", mc.TotalReturn, mc.Observed.TotalReturn, true),
		row("max drawdown", mc.MaxDrawdown, mc.Observed.MaxDrawdown, true),
		row("Sharpe per "+per, mc.Sharpe, mc.Observed.Sharpe, false),
	}
	f := mc.Fan
	if len(f.Steps) < 2 {
		return v, nil
	}
	d := &fanData{X: make(nums, len(f.Steps)), Of: per, Labels: []string{"5th percentile", "25th", "median", "75th", "95th"}}
	for i, s := range f.Steps {
		d.X[i] = float64(s)
	}
	for _, series := range [][]job.Figure{f.P5, f.P25, f.P50, f.P75, f.P95} {
		ys := make(nums, len(series))
		for i, y := range series {
			ys[i] = float64(y) * mc.StartEquity
		}
		d.Y = append(d.Y, ys)
	}
	return v, d
}
