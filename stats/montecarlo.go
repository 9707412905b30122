package stats

import (
	"context"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
)

// Method is how a Monte Carlo run draws its returns from the job's.
type Method uint8

// The Monte Carlo methods. The zero Method is none of them.
const (
	// MethodShuffle ("trades") reshuffles the order of the closed trades'
	// returns: every path has the same trades, so the same Sharpe ratio,
	// in another order; what changes is the drawdown. The total return is
	// the same on every path while the equity stays above zero; returns
	// taken on an equity of zero or below (e ← e + |e|·r) do not commute,
	// and then it varies with the order too.
	MethodShuffle Method = iota + 1
	// MethodResample ("bootstrap") draws as many trade returns as there
	// are, uniformly with replacement (Efron's bootstrap).
	MethodResample
	// MethodBlocks ("blocks") resamples the per-period returns by the
	// stationary bootstrap of Politis & Romano (1994): blocks of
	// consecutive returns, wrapping around at the end, of random
	// geometric lengths with mean MeanBlock, so that the short-range
	// dependence of the returns (volatility clusters, a position held for
	// several periods) survives the resampling.
	MethodBlocks
)

var methodNames = [...]string{MethodShuffle: "trades", MethodResample: "bootstrap", MethodBlocks: "blocks"}

// String is the method's name: "trades", "bootstrap" or "blocks".
func (m Method) String() string {
	if m >= MethodShuffle && m <= MethodBlocks {
		return methodNames[m]
	}
	return "Method(" + strconv.Itoa(int(m)) + ")"
}

// ParseMethod reads a method's name, as String writes it.
func ParseMethod(s string) (Method, error) {
	for m := MethodShuffle; m <= MethodBlocks; m++ {
		if methodNames[m] == s {
			return m, nil
		}
	}
	return 0, errorf("ParseMethod", "method", BadArgument, -1, "%q: want trades, bootstrap or blocks", s)
}

// Monte Carlo bounds.
const (
	DefaultRuns      = 1000
	MaxRuns          = 1_000_000
	DefaultFanPoints = 101
	MaxFanPoints     = 1001
	// MaxFanValues bounds Runs × fan points (32 MB of float64): with more
	// runs the fan has fewer points (at least 2).
	MaxFanValues = 4_000_000
)

// MonteCarloOptions chooses a Monte Carlo. The zero value of every field
// but Method takes its default.
type MonteCarloOptions struct {
	Method Method
	// Runs is the number of paths drawn: DefaultRuns when 0, at most
	// MaxRuns.
	Runs int
	// Seed seeds the generator (PCG, math/rand/v2, with a fixed stream):
	// the same returns, options and seed give the same numbers on any
	// machine. The draws use only the generator's 64-bit outputs, not
	// rand.Rand's mappings, and a test pins the first of them, so a
	// change of Go that would change the numbers fails it.
	Seed uint64
	// MeanBlock is the stationary bootstrap's mean block length, in
	// periods: each period starts a new block with probability
	// 1/MeanBlock. 0 takes T^(1/3) (at least 1), T the number of returns:
	// the order of the block length that is optimal for the bootstrap's
	// variance estimates (Politis & White, 2004, whose data-driven choice
	// this simple rule stands in for); 20,000 periods give 27.1. At least
	// 1 when given, and only for MethodBlocks.
	MeanBlock float64
	// FanPoints is how many steps of the paths the fan keeps:
	// DefaultFanPoints when 0, at most MaxFanPoints, fewer when the paths
	// are shorter or Runs × FanPoints would pass MaxFanValues.
	FanPoints int
}

// Percentiles are the 5th, 25th, 50th, 75th and 95th percentiles of a
// quantity over the paths (the rule of Percentile: numpy's linear).
type Percentiles struct {
	P5, P25, P50, P75, P95 float64
}

// PathStats are the figures of one path.
type PathStats struct {
	// TotalReturn is the path's final equity over its first, minus 1.
	TotalReturn float64
	// MaxDrawdown is the largest fall from a running peak, as a share of
	// the peak, the start being the first peak (as the job report's
	// max_drawdown).
	MaxDrawdown float64
	// Sharpe is the per-step Sharpe ratio of the path's returns (mean over
	// sample standard deviation, with Moments.Sharpe's convention when
	// they do not vary: 0 for a zero mean, ±Inf otherwise).
	Sharpe float64
}

// Fan is the spread of the equity paths over time, for a fan chart: at
// each kept step, percentiles of the paths' equity, the start being 1.
type Fan struct {
	// Steps are the steps kept, increasing from 0 (the start, where every
	// path is 1) to the number of returns, evenly spread
	// (round(i·T/(points − 1))).
	Steps                  []int
	P5, P25, P50, P75, P95 []float64
}

// MonteCarloResult is the outcome of MonteCarlo.
type MonteCarloResult struct {
	Method    Method
	Runs      int
	Seed      uint64
	Steps     int     // returns in each path (those given)
	MeanBlock float64 // the mean block length used; 0 but for MethodBlocks

	// Observed are the figures of the returns as given, in their order.
	Observed PathStats

	TotalReturn Percentiles
	MaxDrawdown Percentiles
	Sharpe      Percentiles
	// LossProbability is the share of the paths whose total return is
	// below 0.
	LossProbability float64

	Fan Fan
}

// MonteCarlo draws Runs paths from returns by the chosen method and
// describes their spread. A path compounds its returns from an equity of
// 1 the way Returns defines them (e ← e + |e|·r, so e·(1 + r) while e > 0);
// the equity is kept as a mantissa and a binary exponent, so no path
// overflows however large its returns (a figure too large for a float64
// is ±Inf).
//
// For MethodShuffle and MethodResample give the closed trades' returns,
// in the order they closed, each the trade's profit over the equity before
// it closed, so that compounding them rebuilds the job's realised equity;
// for MethodBlocks give the per-period returns (Returns of the aligned
// equity). At least two returns, all finite. The errors name the option at
// fault as Arg ("method", "runs", "meanBlock", "fanPoints"); ctx's error
// is returned when ctx ends first.
func MonteCarlo(ctx context.Context, returns []float64, opts MonteCarloOptions) (MonteCarloResult, error) {
	const op = "MonteCarlo"
	k := len(returns)
	if opts.Method < MethodShuffle || opts.Method > MethodBlocks {
		return MonteCarloResult{}, errorf(op, "method", BadArgument, -1, "no method (%d)", opts.Method)
	}
	if k < 2 {
		return MonteCarloResult{}, errorf(op, "returns", TooFew, -1, "%d returns, need at least 2", k)
	}
	if err := checkFinite(op, "returns", returns); err != nil {
		return MonteCarloResult{}, err
	}
	runs := opts.Runs
	if runs == 0 {
		runs = DefaultRuns
	}
	if runs < 1 || runs > MaxRuns {
		return MonteCarloResult{}, errorf(op, "runs", BadArgument, -1, "%d runs: want 1 to %d", opts.Runs, MaxRuns)
	}
	meanBlock := 0.0
	switch {
	case opts.MeanBlock != 0 && opts.Method != MethodBlocks:
		return MonteCarloResult{}, errorf(op, "meanBlock", BadArgument, -1, "a mean block length is for the blocks method only")
	case opts.Method == MethodBlocks && opts.MeanBlock == 0:
		meanBlock = max(1, math.Cbrt(float64(k)))
	case opts.Method == MethodBlocks:
		if !finite(opts.MeanBlock) || opts.MeanBlock < 1 {
			return MonteCarloResult{}, errorf(op, "meanBlock", BadArgument, -1, "%v: want a length of at least 1", opts.MeanBlock)
		}
		meanBlock = opts.MeanBlock
	}
	points := opts.FanPoints
	if points == 0 {
		points = DefaultFanPoints
	}
	if points < 2 || points > MaxFanPoints {
		return MonteCarloResult{}, errorf(op, "fanPoints", BadArgument, -1, "%d points: want 2 to %d", opts.FanPoints, MaxFanPoints)
	}
	points = max(2, min(points, k+1, MaxFanValues/runs))

	res := MonteCarloResult{
		Method: opts.Method, Runs: runs, Seed: opts.Seed, Steps: k, MeanBlock: meanBlock,
		Observed: pathStats(returns, nil, nil).PathStats,
	}
	res.Fan.Steps = make([]int, points)
	for i := range points {
		res.Fan.Steps[i] = int(math.Round(float64(i) * float64(k) / float64(points-1)))
	}

	g := newGen(opts.Seed)
	sample := make([]float64, k)
	total := make([]float64, runs)
	drawdown := make([]float64, runs)
	sharpe := make([]float64, runs)
	fan := make([]float64, points*runs) // step-major: step i of run j at i*runs + j
	fanRow := make([]float64, points)
	losses := 0
	for j := range runs {
		if j%16 == 0 {
			if err := ctx.Err(); err != nil {
				return MonteCarloResult{}, err
			}
		}
		switch opts.Method {
		case MethodShuffle:
			copy(sample, returns)
			for i := k - 1; i > 0; i-- { // Fisher–Yates
				p := g.below(uint64(i + 1))
				sample[i], sample[p] = sample[p], sample[i]
			}
		case MethodResample:
			for i := range sample {
				sample[i] = returns[g.below(uint64(k))]
			}
		case MethodBlocks:
			restart := 1 / meanBlock
			at := g.below(uint64(k))
			sample[0] = returns[at]
			for i := 1; i < k; i++ {
				if g.float() < restart {
					at = g.below(uint64(k))
				} else if at++; at == uint64(k) {
					at = 0
				}
				sample[i] = returns[at]
			}
		}
		st := pathStats(sample, res.Fan.Steps, fanRow)
		total[j], drawdown[j], sharpe[j] = st.TotalReturn, st.MaxDrawdown, st.Sharpe
		if st.loss {
			losses++
		}
		for i, v := range fanRow {
			fan[i*runs+j] = v
		}
	}
	res.TotalReturn = percentiles(total)
	res.MaxDrawdown = percentiles(drawdown)
	res.Sharpe = percentiles(sharpe)
	res.LossProbability = float64(losses) / float64(runs)
	f := &res.Fan
	f.P5, f.P25, f.P50, f.P75, f.P95 = make([]float64, points), make([]float64, points),
		make([]float64, points), make([]float64, points), make([]float64, points)
	for i := range points {
		p := percentiles(fan[i*runs : (i+1)*runs])
		f.P5[i], f.P25[i], f.P50[i], f.P75[i], f.P95[i] = p.P5, p.P25, p.P50, p.P75, p.P95
	}
	return res, nil
}

// percentiles sorts xs (no NaN) in place and gives its five percentiles.
func percentiles(xs []float64) Percentiles {
	slices.Sort(xs)
	return Percentiles{
		P5: percentileSorted(xs, 5), P25: percentileSorted(xs, 25), P50: percentileSorted(xs, 50),
		P75: percentileSorted(xs, 75), P95: percentileSorted(xs, 95),
	}
}

type pathResult struct {
	PathStats
	loss bool
}

// pathStats compounds rs from an equity of 1. When steps is given, fan[i]
// gets the equity after steps[i] returns.
func pathStats(rs []float64, steps []int, fan []float64) pathResult {
	eq, peak := one(), one()
	dd := 0.0
	fi := 0
	for fi < len(steps) && steps[fi] == 0 {
		fan[fi] = 1
		fi++
	}
	for i, r := range rs {
		eq.step(r)
		if !eq.below(peak) {
			peak = eq
		} else {
			dd = max(dd, eq.drawdown(peak))
		}
		for fi < len(steps) && steps[fi] == i+1 {
			fan[fi] = eq.value()
			fi++
		}
	}
	var out pathResult
	out.TotalReturn = eq.value() - 1
	out.loss = eq.below(one())
	out.MaxDrawdown = dd
	out.Sharpe = sumsOf(rs, false).sharpe()
	return out
}

// equity is m·2^x with m in [0.5, 1), in (−1, −0.5], or 0: a path's equity
// that cannot overflow.
type equity struct {
	m float64
	x int
}

func one() equity { return equity{0.5, 1} }

// step applies a return: e ← e + |e|·r, that is e·(1 + r) when e > 0 and
// e·(1 − r) when e < 0. |m| < 1 and |1 ± r| ≤ MaxFloat64 keep the
// product finite.
func (e *equity) step(r float64) {
	switch {
	case e.m > 0:
		e.m *= 1 + r
	case e.m < 0:
		e.m *= 1 - r
	default:
		return
	}
	if e.m == 0 {
		e.x = 0
		return
	}
	fr, x := math.Frexp(e.m)
	e.m, e.x = fr, e.x+x
}

// below reports e < f.
func (e equity) below(f equity) bool {
	es, fs := sign(e.m), sign(f.m)
	switch {
	case es != fs:
		return es < fs
	case es == 0:
		return false
	case e.x != f.x:
		return (e.x < f.x) == (es > 0)
	}
	return e.m < f.m
}

// drawdown is (peak − e)/peak for a positive peak.
func (e equity) drawdown(peak equity) float64 {
	r := e.m / peak.m
	switch d := e.x - peak.x; d {
	case 0:
	case -1:
		r *= 0.5
	default:
		r = math.Ldexp(r, d)
	}
	return 1 - r
}

func (e equity) value() float64 { return math.Ldexp(e.m, e.x) }

func sign(v float64) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// gen draws from PCG, math/rand/v2's, using only its 64-bit outputs so
// that the draws do not depend on how rand.Rand maps them.
type gen struct{ src *rand.PCG }

// pcgStream is the generator's fixed second seed ("stratbnc").
const pcgStream = 0x7374726174626e63

func newGen(seed uint64) *gen { return &gen{rand.NewPCG(seed, pcgStream)} }

// below is uniform in [0, n), n > 0, by Lemire's multiply-and-reject.
func (g *gen) below(n uint64) uint64 {
	hi, lo := bits.Mul64(g.src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(g.src.Uint64(), n)
		}
	}
	return hi
}

// float is uniform in [0, 1), a multiple of 2⁻⁵³.
func (g *gen) float() float64 { return float64(g.src.Uint64()>>11) * 0x1p-53 }
