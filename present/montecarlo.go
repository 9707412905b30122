package present

import (
	"fmt"
	"math"
	"path/filepath"
	"stratbench/internal/termtext"
	"stratbench/internal/units"
	"stratbench/job"
	"strings"
)

// MonteCarloText is `montecarlo`'s text output: what was drawn, the percentiles
// beside the job's own figures, the probability of a loss, where the
// result is kept.
func MonteCarloText(mc *job.MonteCarlo, rep *job.Report, path string) string {
	var b strings.Builder
	what := map[string]string{
		"trades":    fmt.Sprintf("its %s in random orders", Counted(mc.Steps, "closed trade", "closed trades")),
		"bootstrap": fmt.Sprintf("%s drawn from its closed trades with replacement", units.Count(mc.Steps)),
		"blocks":    fmt.Sprintf("its %s returns in blocks of %.1f bars on average (stationary bootstrap)", units.Count(mc.Steps), mc.MeanBlock),
	}[mc.Method]
	fmt.Fprintf(&b, "Monte Carlo of job %s (%s): %s paths of %s, seed %d\n\n", mc.JobID, termtext.Line(filepath.Base(rep.Strategy.Path)), units.Count(mc.Runs), what, mc.Seed)
	per := "trade"
	if mc.Of == "bars" {
		per = "bar"
	}
	fmt.Fprintf(&b, "%-20s %9s %9s %9s %9s %9s %10s\n", "", "5%", "25%", "50%", "75%", "95%", "the job")
	row := func(name string, p job.Percentiles, obs job.Figure, f func(float64) string) {
		fmt.Fprintf(&b, "%-20s %9s %9s %9s %9s %9s %10s\n", name, f(float64(p.P5)), f(float64(p.P25)), f(float64(p.P50)),
			f(float64(p.P75)), f(float64(p.P95)), f(float64(obs)))
	}
	pct := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "—"
		}
		return units.Percent(v)
	}
	num := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "—"
		}
		return fmt.Sprintf("%.4f", v)
	}
	row("total return", mc.TotalReturn, mc.Observed.TotalReturn, pct)
	row("max drawdown", mc.MaxDrawdown, mc.Observed.MaxDrawdown, pct)
	row("Sharpe (per "+per+")", mc.Sharpe, mc.Observed.Sharpe, num)
	fmt.Fprintf(&b, "\nprobability of a loss  %s of the paths end below their start\n", units.Percent(mc.LossProbability))
	fmt.Fprintf(&b, "kept in %s (the job's report draws the paths: stratbench report %s)\n", path, mc.JobID)
	return b.String()
}
