package stats

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"
)

func mc(t *testing.T, returns []float64, opts MonteCarloOptions) MonteCarloResult {
	t.Helper()
	res, err := MonteCarlo(context.Background(), returns, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestMonteCarloSameSeed(t *testing.T) {
	trades := testColumns(5, 300, 1)[0]
	for m := MethodShuffle; m <= MethodBlocks; m++ {
		a := mc(t, trades, MonteCarloOptions{Method: m})
		b := mc(t, trades, MonteCarloOptions{Method: m, Runs: DefaultRuns, Seed: 0})
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%v: the same seed gave different results:\n%+v\n%+v", m, a, b)
		}
		c := mc(t, trades, MonteCarloOptions{Method: m, Seed: 1})
		if reflect.DeepEqual(a.MaxDrawdown, c.MaxDrawdown) {
			t.Errorf("%v: seeds 0 and 1 gave the same drawdowns %+v", m, a.MaxDrawdown)
		}
		if a.Runs != 1000 || a.Steps != 300 || a.Method != m {
			t.Errorf("%v: %d runs, %d steps, method %v", m, a.Runs, a.Steps, a.Method)
		}
	}
	// The draws are pinned: these numbers change only if the generator
	// or the way it is used changes (and with them every user's results
	// for a seed).
	g := newGen(0)
	if got := [3]uint64{g.src.Uint64(), g.below(1000), g.below(3)}; got != [3]uint64{0x4b7906debc6d8483, 372, 2} {
		t.Errorf("PCG(0) draws %#x", got)
	}
	res := mc(t, trades, MonteCarloOptions{Method: MethodResample, Runs: 200, Seed: 42})
	if got := res.TotalReturn.P50; math.Abs(got-0.029492246213002948) > 1e-15 {
		t.Errorf("resample, seed 42: median total return %.17g", got)
	}
}

// A job whose trades all win never loses money, in any order: a loss
// probability of 0, the same total return and Sharpe ratio in every
// reshuffled path, and no drawdown.
func TestMonteCarloAllWinningTrades(t *testing.T) {
	trades := []float64{0.01, 0.02, 0.005, 0.03, 0.001, 0.015, 0.04, 0.002}
	res := mc(t, trades, MonteCarloOptions{Method: MethodShuffle})
	if res.LossProbability != 0 {
		t.Errorf("loss probability %v, want 0", res.LossProbability)
	}
	// Equal but for the rounding of the products in another order.
	for _, p := range []Percentiles{res.TotalReturn, res.Sharpe} {
		for _, v := range []float64{p.P5, p.P25, p.P50, p.P75, p.P95} {
			if math.Abs(v-p.P50) > 1e-14*math.Abs(p.P50) {
				t.Errorf("reshuffled percentiles differ: %+v", p)
			}
		}
	}
	if math.Abs(res.TotalReturn.P50-res.Observed.TotalReturn) > 1e-14 || math.Abs(res.Sharpe.P50-res.Observed.Sharpe) > 1e-13 {
		t.Errorf("total return %v, Sharpe %v; the trades as given: %+v", res.TotalReturn.P50, res.Sharpe.P50, res.Observed)
	}
	if res.MaxDrawdown != (Percentiles{}) || res.Observed.MaxDrawdown != 0 {
		t.Errorf("drawdowns %+v, observed %v, want 0", res.MaxDrawdown, res.Observed.MaxDrawdown)
	}
	if res := mc(t, trades, MonteCarloOptions{Method: MethodResample}); res.LossProbability != 0 {
		t.Errorf("resampled: loss probability %v, want 0", res.LossProbability)
	}
	losing := scaled(trades, -1)
	if res := mc(t, losing, MonteCarloOptions{Method: MethodShuffle}); res.LossProbability != 1 {
		t.Errorf("all losing: loss probability %v, want 1", res.LossProbability)
	}

	// One losing trade among winners: reshuffling moves the drawdown, not
	// the total.
	mixed := []float64{0.05, 0.05, -0.08, 0.05, 0.05}
	res = mc(t, mixed, MonteCarloOptions{Method: MethodShuffle})
	if d := res.MaxDrawdown; math.Abs(d.P5-0.08) > 1e-15 || math.Abs(d.P95-0.08) > 1e-15 || res.LossProbability != 0 {
		t.Errorf("one loss of 8%%: drawdowns %+v, loss probability %v", d, res.LossProbability)
	}
}

func TestMonteCarloObserved(t *testing.T) {
	// 1 → 1.1 → 0.88 → 1.32: total 32%, drawdown 0.22/1.1 = 20%.
	rs := []float64{0.1, -0.2, 0.5}
	res := mc(t, rs, MonteCarloOptions{Method: MethodResample, Runs: 10})
	mean, sd := 0.4/3, math.Sqrt((math.Pow(0.1-0.4/3, 2)+math.Pow(-0.2-0.4/3, 2)+math.Pow(0.5-0.4/3, 2))/2)
	o := res.Observed
	if math.Abs(o.TotalReturn-0.32) > 1e-15 || math.Abs(o.MaxDrawdown-0.2) > 1e-15 || math.Abs(o.Sharpe-mean/sd) > 1e-15 {
		t.Errorf("observed %+v, want total 0.32, drawdown 0.2, Sharpe %v", o, mean/sd)
	}
	// A path that ends where it started is not a loss: 1 → 2 → 1 and
	// 1 → 0.5 → 1.
	if res := mc(t, []float64{1, -0.5}, MonteCarloOptions{Method: MethodShuffle, Runs: 20}); res.LossProbability != 0 || res.TotalReturn.P5 != 0 {
		t.Errorf("back to the start: loss probability %v, total returns %+v", res.LossProbability, res.TotalReturn)
	}
	// Past a total loss the equity goes negative, and returns apply to
	// its magnitude (e + |e|·r), as the job report's returns do:
	// 1 → −0.5 → 0.
	res = mc(t, []float64{-1.5, 1}, MonteCarloOptions{Method: MethodShuffle, Runs: 1})
	if res.Observed.TotalReturn != -1 || res.Observed.MaxDrawdown != 1.5 {
		t.Errorf("1 → −0.5 → 0: %+v", res.Observed)
	}
}

func TestMonteCarloBlocks(t *testing.T) {
	rs := testColumns(9, 1000, 1)[0]
	res := mc(t, rs, MonteCarloOptions{Method: MethodBlocks})
	if res.MeanBlock != 10 {
		t.Errorf("mean block %v for 1000 returns, want 1000^(1/3) = 10", res.MeanBlock)
	}
	// Blocks that never end: each path is the returns rotated, so every
	// path has the job's total return.
	res = mc(t, rs, MonteCarloOptions{Method: MethodBlocks, MeanBlock: 1e18, Runs: 50})
	if p := res.TotalReturn; math.Abs(p.P5-res.Observed.TotalReturn) > 1e-12 || math.Abs(p.P95-res.Observed.TotalReturn) > 1e-12 {
		t.Errorf("rotations: total returns %+v, the job's %v", p, res.Observed.TotalReturn)
	}
	if p := res.MaxDrawdown; p.P5 == p.P95 {
		t.Errorf("rotations all have the same drawdown %+v", p)
	}
	// Blocks of mean length 1 are the iid bootstrap: the spread of the
	// total return is close to the resampled one's (1000 paths each).
	iid := mc(t, rs, MonteCarloOptions{Method: MethodBlocks, MeanBlock: 1})
	boot := mc(t, rs, MonteCarloOptions{Method: MethodResample})
	if d := (iid.TotalReturn.P95 - iid.TotalReturn.P5) / (boot.TotalReturn.P95 - boot.TotalReturn.P5); d < 0.85 || d > 1.15 {
		t.Errorf("5–95%% spread of blocks of 1 over the bootstrap's: %v", d)
	}
}

func TestMonteCarloFan(t *testing.T) {
	rs := testColumns(4, 250, 1)[0]
	res := mc(t, rs, MonteCarloOptions{Method: MethodResample, Runs: 400, FanPoints: 11})
	f := res.Fan
	if len(f.Steps) != 11 || f.Steps[0] != 0 || f.Steps[10] != 250 || f.Steps[1] != 25 {
		t.Fatalf("fan steps %v", f.Steps)
	}
	for i := range f.Steps {
		if !(f.P5[i] <= f.P25[i] && f.P25[i] <= f.P50[i] && f.P50[i] <= f.P75[i] && f.P75[i] <= f.P95[i]) {
			t.Errorf("step %d: %v %v %v %v %v", f.Steps[i], f.P5[i], f.P25[i], f.P50[i], f.P75[i], f.P95[i])
		}
	}
	if f.P5[0] != 1 || f.P95[0] != 1 {
		t.Errorf("the fan starts at %v–%v, want 1", f.P5[0], f.P95[0])
	}
	if math.Abs(f.P50[10]-1-res.TotalReturn.P50) > 1e-12 || math.Abs(f.P5[10]-1-res.TotalReturn.P5) > 1e-12 {
		t.Errorf("the fan ends at %v (median), total return %v", f.P50[10], res.TotalReturn.P50)
	}
	// Short paths keep every step; many runs keep fewer points.
	if res := mc(t, rs[:5], MonteCarloOptions{Method: MethodShuffle, Runs: 3}); len(res.Fan.Steps) != 6 || res.Fan.Steps[5] != 5 {
		t.Errorf("5 returns: fan steps %v", res.Fan.Steps)
	}
	if testing.Short() {
		return
	}
	if res := mc(t, rs[:12], MonteCarloOptions{Method: MethodShuffle, Runs: 400_000}); len(res.Fan.Steps) != 10 {
		t.Errorf("400,000 runs: %d fan points, want %d", len(res.Fan.Steps), MaxFanValues/400_000)
	}
}

// Returns far beyond any market's do not overflow a path or make NaN.
func TestMonteCarloHugeReturns(t *testing.T) {
	rs := []float64{1e300, -0.5, 1e300, 3, 1e-300, 1.7e308, -0.99}
	for m := MethodShuffle; m <= MethodBlocks; m++ {
		res := mc(t, rs, MonteCarloOptions{Method: m, Runs: 100})
		for _, v := range []float64{res.TotalReturn.P5, res.TotalReturn.P95, res.MaxDrawdown.P5, res.MaxDrawdown.P95,
			res.Sharpe.P5, res.Sharpe.P95, res.Observed.TotalReturn, res.Observed.Sharpe} {
			if math.IsNaN(v) {
				t.Fatalf("%v: NaN in %+v", m, res)
			}
		}
		if m == MethodShuffle && res.LossProbability != 0 {
			t.Errorf("%v: loss probability %v, want 0", m, res.LossProbability)
		}
	}
	// 1e310 is past MaxFloat64 but the path goes on: times 1e-15 it is
	// 1e295 again, a fall of nearly 100%.
	fall := -(1 - 1e-15)
	left := 1 + fall // 9.992e-16
	res := mc(t, []float64{1e300, 1e10, fall}, MonteCarloOptions{Method: MethodShuffle, Runs: 1})
	if o := res.Observed; math.Abs(o.TotalReturn/(left*(1e10+1)*1e300)-1) > 1e-12 || math.Abs(o.MaxDrawdown-(1-left)) > 4e-16 {
		t.Errorf("1 → 1e300 → 1e310 → 1e295: %+v, want %v and %v", o, left*(1e10+1)*1e300, 1-left)
	}
	var e equity = one()
	e.step(1e300)
	e.step(1e300) // 1e600 ≈ 2^1993.2
	if e.below(equity{0.5, 1993}) || !e.below(equity{0.5, 1995}) || one().below(one()) || !(equity{-0.5, 3}).below(equity{0, 0}) {
		t.Errorf("equity comparison: %+v", e)
	}
}

func TestMonteCarloRefuses(t *testing.T) {
	rs := []float64{0.1, -0.1, 0.2}
	for _, c := range []struct {
		rs   []float64
		opts MonteCarloOptions
		kind Kind
		arg  string
	}{
		{rs, MonteCarloOptions{}, BadArgument, "method"},
		{rs, MonteCarloOptions{Method: 4}, BadArgument, "method"},
		{rs, MonteCarloOptions{Method: MethodShuffle, Runs: -1}, BadArgument, "runs"},
		{rs, MonteCarloOptions{Method: MethodShuffle, Runs: MaxRuns + 1}, BadArgument, "runs"},
		{rs, MonteCarloOptions{Method: MethodShuffle, MeanBlock: 5}, BadArgument, "meanBlock"},
		{rs, MonteCarloOptions{Method: MethodBlocks, MeanBlock: 0.5}, BadArgument, "meanBlock"},
		{rs, MonteCarloOptions{Method: MethodBlocks, MeanBlock: math.NaN()}, BadArgument, "meanBlock"},
		{rs, MonteCarloOptions{Method: MethodBlocks, FanPoints: 1}, BadArgument, "fanPoints"},
		{rs, MonteCarloOptions{Method: MethodBlocks, FanPoints: MaxFanPoints + 1}, BadArgument, "fanPoints"},
		{rs[:1], MonteCarloOptions{Method: MethodBlocks}, TooFew, "returns"},
		{[]float64{0.1, math.NaN()}, MonteCarloOptions{Method: MethodBlocks}, NotFinite, "returns"},
	} {
		_, err := MonteCarlo(context.Background(), c.rs, c.opts)
		var e *Error
		if !errors.As(err, &e) || e.Kind != c.kind || e.Arg != c.arg {
			t.Errorf("%v %+v: %v, want a %v error on %q", c.rs, c.opts, err, c.kind, c.arg)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := MonteCarlo(ctx, rs, MonteCarloOptions{Method: MethodShuffle}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestParseMethod(t *testing.T) {
	for m := MethodShuffle; m <= MethodBlocks; m++ {
		if got, err := ParseMethod(m.String()); got != m || err != nil {
			t.Errorf("ParseMethod(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := ParseMethod("shuffle"); !errors.Is(err, ErrBadArgument) {
		t.Errorf("ParseMethod(shuffle): %v", err)
	}
	if Method(0).String() != "Method(0)" || MethodBlocks.String() != "blocks" {
		t.Errorf("names: %v %v", Method(0), MethodBlocks)
	}
}

// TestMonteCarloShuffleTotalReturn: under MethodShuffle every path has the
// job's total return while the equity stays above zero; once a job's
// equity went to zero or below, returns apply to its magnitude and the
// order of the trades changes where a path ends (documented in
// docs/robustness.md): 1 → −0.5 → −0.25 in the job's order, 1 → 1.5 →
// −0.75 the other way round.
func TestMonteCarloShuffleTotalReturn(t *testing.T) {
	res := mc(t, []float64{0.1, -0.2, 0.5, -0.05}, MonteCarloOptions{Method: MethodShuffle, Runs: 200})
	if p := res.TotalReturn; math.Abs(p.P5-p.P95) > 1e-14 || math.Abs(p.P50-res.Observed.TotalReturn) > 1e-14 {
		t.Errorf("positive equity: total returns %+v, the job's %v", p, res.Observed.TotalReturn)
	}
	res = mc(t, []float64{-1.5, 0.5}, MonteCarloOptions{Method: MethodShuffle, Runs: 200})
	if p := res.TotalReturn; res.Observed.TotalReturn != -1.25 || p.P5 != -1.75 || p.P95 != -1.25 {
		t.Errorf("past a total loss: total returns %+v, the job's %v; want from -1.75 to -1.25", p, res.Observed.TotalReturn)
	}
}
