package stats

import (
	"context"
	"math"
)

// Block counts of CSCV.
const (
	// DefaultBlocks is S when the returns are long enough:
	// C(16, 8) = 12,870 combinations.
	DefaultBlocks = 16
	// MinBlockRows is the fewest returns a block has under the default
	// rule.
	MinBlockRows = 16
	// MinBlocks is the fewest blocks the default rule accepts
	// (C(4, 2) = 6 combinations); shorter returns are a TooFew error.
	MinBlocks = 4
	// MaxBlocks is the most blocks NewCSCV takes (C(20, 10) = 184,756
	// combinations, each costing O(S·N)).
	MaxBlocks = 20
)

// CSCVBlocks is the default block count S for t returns: the largest even
// number at most DefaultBlocks whose blocks hold at least MinBlockRows
// returns each, min(16, 2·⌊t/32⌋); 0 when that is below MinBlocks
// (t < 64).
func CSCVBlocks(t int) int {
	s := min(DefaultBlocks, t/(2*MinBlockRows)*2)
	if s < MinBlocks {
		return 0
	}
	return s
}

// CSCV computes the probability of backtest overfitting by combinatorially
// symmetric cross-validation (Bailey, Borwein, López de Prado & Zhu,
// 2015) over N runs' returns on the same T periods.
//
// The T × N matrix is never held: Add takes one run's T returns at a time
// (a sweep streams them from its job folders) and keeps only each block's
// sum and sum of squares, 2·S numbers a run, from which every in-sample
// and out-of-sample Sharpe ratio follows exactly. Memory is O(S·N) and
// Result costs O(C(S, S/2)·S·N).
//
// The T rows are cut into S blocks of ⌊T/S⌋ consecutive rows; the first
// T mod S rows (the oldest) are left out so that the blocks are equal.
// For each of the C(S, S/2) choices of S/2 blocks as the in-sample set
// (in lexicographic order of the block numbers, the rest out-of-sample):
//
//   - every run's Sharpe ratio mean/std (std with divisor n − 1) over the
//     in-sample rows and over the out-of-sample rows;
//   - n*, the run with the best in-sample Sharpe ratio (the lowest run
//     number among equals);
//   - its rank among the N out-of-sample Sharpe ratios, 1 the worst and N
//     the best, equal values taking the mean of their ranks (mid-ranks:
//     rank = #{less} + (#{equal, n* included} + 1)/2);
//   - ω = rank/(N + 1), in (0, 1) as the paper defines it, and the logit
//     λ = ln(ω/(1 − ω)); λ ≤ 0 when n* does no better than the median out
//     of sample.
//
// PBO is the share of choices with λ ≤ 0. OOSLossProbability is the
// share in which n*'s out-of-sample mean return (and so its Sharpe ratio)
// is below 0: the paper's probability of loss.
//
// A half in which a run's returns do not vary (a run that does not trade
// there) has Sharpe ratio 0 when its mean is 0, +Inf or −Inf by the sign
// of a non-zero mean; the variance is taken as 0 when it is below
// 32·ε of the mean square, where rounding leaves nothing of it.
type CSCV struct {
	t, blocks, rows, skip int
	runs                  int
	sum, sumsq            []float64 // run-major: run j's block b at j*blocks + b
}

// NewCSCV prepares CSCV over t returns per run in blocks blocks; blocks 0
// takes CSCVBlocks(t) and is a TooFew error when t is too short for it.
// A given blocks must be even, at most MaxBlocks, and leave at least two
// returns a block.
func NewCSCV(t, blocks int) (*CSCV, error) {
	const op = "NewCSCV"
	if blocks == 0 {
		if blocks = CSCVBlocks(t); blocks == 0 {
			return nil, errorf(op, "t", TooFew, -1, "%d returns, need at least %d", t, MinBlocks*MinBlockRows)
		}
	}
	if blocks < 2 || blocks%2 != 0 || blocks > MaxBlocks {
		return nil, errorf(op, "blocks", BadArgument, -1, "%d blocks: need an even number from 2 to %d", blocks, MaxBlocks)
	}
	if t < 2*blocks {
		return nil, errorf(op, "t", TooFew, -1, "%d returns for %d blocks, need at least %d", t, blocks, 2*blocks)
	}
	rows := t / blocks
	return &CSCV{t: t, blocks: blocks, rows: rows, skip: t - rows*blocks}, nil
}

// Blocks is S.
func (c *CSCV) Blocks() int { return c.blocks }

// Runs is the number of runs added.
func (c *CSCV) Runs() int { return c.runs }

// Add takes the next run's per-period returns (run numbers count from 0 in
// the order of Add): exactly T of them, all finite. A refused run is not
// added.
func (c *CSCV) Add(returns []float64) error {
	const op = "CSCV.Add"
	if len(returns) != c.t {
		return errorf(op, "returns", BadArgument, -1, "%d returns, want %d", len(returns), c.t)
	}
	if err := checkFinite(op, "returns", returns); err != nil {
		return err
	}
	// Sharpe ratios do not change when a run's returns are all multiplied
	// by the same positive number; a power of two does it exactly, and
	// keeps the sums of squares from overflowing.
	big := 0.0
	for _, x := range returns[c.skip:] {
		big = max(big, math.Abs(x))
	}
	e := scaleExp(big)
	for b := range c.blocks {
		var s1, s2 neumaier
		for _, x := range returns[c.skip+b*c.rows : c.skip+(b+1)*c.rows] {
			x = unscale(x, e)
			s1.add(x)
			s2.add(x * x)
		}
		c.sum = append(c.sum, s1.value())
		c.sumsq = append(c.sumsq, s2.value())
	}
	c.runs++
	return nil
}

// CSCVResult is the outcome of CSCV.
type CSCVResult struct {
	Runs         int // N
	Periods      int // T, the returns each run gave
	Skipped      int // the first T mod S returns, left out
	Blocks       int // S
	BlockRows    int // ⌊T/S⌋ returns a block
	Combinations int // C(S, S/2)

	// PBO is the probability of backtest overfitting: the share of the
	// combinations whose λ ≤ 0.
	PBO float64
	// OOSLossProbability is the share of the combinations in which the
	// in-sample best run's out-of-sample mean return is below 0.
	OOSLossProbability float64

	// Splits holds each combination's outcome, in the order of the
	// combinations (lexicographic in the in-sample block numbers: the
	// first is blocks 0 … S/2−1 in sample).
	Splits []Split
}

// Split is the outcome of one in-sample/out-of-sample split.
type Split struct {
	Chosen      int     // n*, the run with the best in-sample Sharpe ratio
	InSample    float64 // n*'s in-sample Sharpe ratio
	OutOfSample float64 // n*'s out-of-sample Sharpe ratio
	Rank        float64 // n*'s out-of-sample rank, 1 to N, mid-rank for ties
	Omega       float64 // ω = Rank/(N + 1)
	Lambda      float64 // λ = ln(ω/(1 − ω))
}

// Lambdas are the splits' λ values, in the order of Splits.
func (r CSCVResult) Lambdas() []float64 {
	out := make([]float64, len(r.Splits))
	for i, s := range r.Splits {
		out[i] = s.Lambda
	}
	return out
}

// Result runs the cross-validation over the runs added so far; fewer than
// two runs are a TooFew error. It returns ctx's error when ctx ends first.
func (c *CSCV) Result(ctx context.Context) (CSCVResult, error) {
	n, s := c.runs, c.blocks
	if n < 2 {
		return CSCVResult{}, errorf("CSCV.Result", "runs", TooFew, -1, "%d runs, need at least 2", n)
	}
	half := s / 2
	res := CSCVResult{
		Runs: n, Periods: c.t, Skipped: c.skip, Blocks: s, BlockRows: c.rows,
		Combinations: binomial(s, half),
	}
	res.Splits = make([]Split, 0, res.Combinations)
	rowsHalf := float64(half * c.rows)

	in := make([]int, half) // the in-sample blocks, increasing
	for i := range in {
		in[i] = i
	}
	out := make([]int, half)
	oos := make([]float64, n)    // every run's out-of-sample Sharpe ratio
	oosSum := make([]float64, n) // and the sum of its out-of-sample returns
	overfit, loss := 0, 0
	for k := 0; ; k++ {
		if k%64 == 0 {
			if err := ctx.Err(); err != nil {
				return CSCVResult{}, err
			}
		}
		complement(in, s, out)
		best, bestIS := -1, 0.0
		for j := range n {
			row := j * s
			var is1, is2, os1, os2 float64
			for _, b := range in {
				is1 += c.sum[row+b]
				is2 += c.sumsq[row+b]
			}
			for _, b := range out {
				os1 += c.sum[row+b]
				os2 += c.sumsq[row+b]
			}
			if sr := blockSharpe(is1, is2, rowsHalf); best < 0 || sr > bestIS {
				best, bestIS = j, sr
			}
			oos[j] = blockSharpe(os1, os2, rowsHalf)
			oosSum[j] = os1
		}
		less, equal := 0, 0
		for _, v := range oos {
			switch {
			case v < oos[best]:
				less++
			case v == oos[best]:
				equal++
			}
		}
		rank := float64(less) + float64(equal+1)/2
		omega := rank / float64(n+1)
		res.Splits = append(res.Splits, Split{
			Chosen: best, InSample: bestIS, OutOfSample: oos[best],
			Rank: rank, Omega: omega, Lambda: math.Log(omega / (1 - omega)),
		})
		if 2*less+equal+1 <= n+1 { // 2·rank ≤ N + 1: ω ≤ 1/2, λ ≤ 0
			overfit++
		}
		if oosSum[best] < 0 {
			loss++
		}
		if !nextCombination(in, s) {
			break
		}
	}
	res.PBO = float64(overfit) / float64(len(res.Splits))
	res.OOSLossProbability = float64(loss) / float64(len(res.Splits))
	return res, nil
}

// blockSharpe is the Sharpe ratio (std with divisor n − 1) of n returns
// whose sum is s1 and sum of squares s2.
func blockSharpe(s1, s2, n float64) float64 {
	mean := s1 / n
	d := s2 - s1*mean // Σ(r − mean)²
	if d <= 32*epsilon*s2 {
		return zeroVarianceSharpe(mean)
	}
	return mean / math.Sqrt(d/(n-1))
}

const epsilon = 0x1p-52

// neumaier is Neumaier's compensated sum.
type neumaier struct{ sum, c float64 }

func (s *neumaier) add(x float64) {
	t := s.sum + x
	if math.Abs(s.sum) >= math.Abs(x) {
		s.c += (s.sum - t) + x
	} else {
		s.c += (x - t) + s.sum
	}
	s.sum = t
}

func (s *neumaier) value() float64 { return s.sum + s.c }

// nextCombination moves c, k increasing numbers below n, to the next
// combination in lexicographic order; false after the last.
func nextCombination(c []int, n int) bool {
	k := len(c)
	i := k - 1
	for i >= 0 && c[i] == n-k+i {
		i--
	}
	if i < 0 {
		return false
	}
	c[i]++
	for j := i + 1; j < k; j++ {
		c[j] = c[j-1] + 1
	}
	return true
}

// complement fills out with the numbers below n not in c (both
// increasing).
func complement(c []int, n int, out []int) {
	out = out[:0]
	i := 0
	for v := range n {
		if i < len(c) && c[i] == v {
			i++
			continue
		}
		out = append(out, v)
	}
}

func binomial(n, k int) int {
	r := 1
	for i := 1; i <= k; i++ {
		r = r * (n - k + i) / i
	}
	return r
}
