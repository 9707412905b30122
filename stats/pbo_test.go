package stats

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
)

func TestCSCVBlocks(t *testing.T) {
	for _, c := range []struct{ t, s int }{
		{0, 0}, {63, 0}, {64, 4}, {95, 4}, {96, 6}, {128, 8}, {255, 14}, {256, 16}, {20000, 16},
	} {
		if got := CSCVBlocks(c.t); got != c.s {
			t.Errorf("CSCVBlocks(%d) = %d, want %d", c.t, got, c.s)
		}
	}
}

func TestNewCSCVRefuses(t *testing.T) {
	for _, c := range []struct {
		t, blocks int
		kind      Kind
		arg       string
	}{
		{63, 0, TooFew, "t"}, {100, 3, BadArgument, "blocks"}, {100, 22, BadArgument, "blocks"},
		{100, -2, BadArgument, "blocks"}, {7, 4, TooFew, "t"},
	} {
		_, err := NewCSCV(c.t, c.blocks)
		var e *Error
		if !errors.As(err, &e) || e.Kind != c.kind || e.Arg != c.arg {
			t.Errorf("NewCSCV(%d, %d) = %v, want a %v error on %q", c.t, c.blocks, err, c.kind, c.arg)
		}
	}
	c, err := NewCSCV(8, 4)
	if err != nil {
		t.Fatal(err)
	}
	var e *Error
	if err := c.Add(make([]float64, 7)); !errors.As(err, &e) || e.Kind != BadArgument {
		t.Errorf("7 returns for 8: %v", err)
	}
	if err := c.Add([]float64{0, 0, 0, math.Inf(-1), 0, 0, 0, 0}); !errors.As(err, &e) || e.Kind != NotFinite || e.Index != 3 {
		t.Errorf("an infinite return: %v", err)
	}
	if c.Runs() != 0 {
		t.Errorf("refused runs counted: %d", c.Runs())
	}
	if err := c.Add(make([]float64, 8)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Result(context.Background()); !errors.Is(err, ErrTooFew) {
		t.Errorf("one run: %v", err)
	}
}

func cscvOf(t *testing.T, blocks int, cols ...[]float64) CSCVResult {
	t.Helper()
	c, err := NewCSCV(len(cols[0]), blocks)
	if err != nil {
		t.Fatal(err)
	}
	for _, col := range cols {
		if err := c.Add(col); err != nil {
			t.Fatal(err)
		}
	}
	res, err := c.Result(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Two blocks of two returns each, worked by hand. Sharpe ratios per block
// (std with divisor 1): {0.01, 0.03} → √2, {−0.01, 0.01} → 0,
// {0, 0.02} → √2/2, {−0.02, 0} → −√2/2.
//
//	run 0: block 0 √2,     block 1 0
//	run 1: block 0 √2/2,   block 1 √2
//	run 2: block 0 −√2/2,  block 1 √2/2
//
// Block 0 in sample: run 0 is best, and worst out of sample: rank 1,
// ω = 1/4, λ = ln(1/3). Block 1 in sample: run 1 is best, second of three
// out of sample: rank 2, ω = 1/2, λ = 0, which counts as overfit. PBO 1;
// neither chosen run loses money out of sample (means 0 and 0.01).
func TestCSCVByHand(t *testing.T) {
	r2 := math.Sqrt2
	res := cscvOf(t, 2,
		[]float64{0.01, 0.03, -0.01, 0.01},
		[]float64{0, 0.02, 0.01, 0.03},
		[]float64{-0.02, 0, 0, 0.02},
	)
	want := []Split{
		{Chosen: 0, InSample: r2, OutOfSample: 0, Rank: 1, Omega: 0.25, Lambda: math.Log(1.0 / 3)},
		{Chosen: 1, InSample: r2, OutOfSample: r2 / 2, Rank: 2, Omega: 0.5, Lambda: 0},
	}
	checkSplits(t, res, want)
	if res.PBO != 1 || res.OOSLossProbability != 0 || res.Combinations != 2 || res.BlockRows != 2 || res.Skipped != 0 {
		t.Errorf("PBO %v, loss %v, %d combinations, %d rows a block, %d skipped; want 1, 0, 2, 2, 0",
			res.PBO, res.OOSLossProbability, res.Combinations, res.BlockRows, res.Skipped)
	}
	if l := res.Lambdas(); len(l) != 2 || l[0] != res.Splits[0].Lambda || l[1] != 0 {
		t.Errorf("Lambdas() = %v", l)
	}

	// Ties: run 3 repeats run 0. In sample, the lower run number wins;
	// out of sample, equal Sharpe ratios share their mean rank. Block 0 in
	// sample: out of sample 0, √2, √2/2, 0: runs 0 and 3 share ranks 1 and
	// 2, so 1.5, ω = 1.5/5. Block 1 in sample: run 1 (√2) is best, out of
	// sample √2, √2/2, −√2/2, √2: run 1 is second, ω = 2/5.
	res = cscvOf(t, 2,
		[]float64{0.01, 0.03, -0.01, 0.01},
		[]float64{0, 0.02, 0.01, 0.03},
		[]float64{-0.02, 0, 0, 0.02},
		[]float64{0.01, 0.03, -0.01, 0.01},
	)
	want = []Split{
		{Chosen: 0, InSample: r2, OutOfSample: 0, Rank: 1.5, Omega: 0.3, Lambda: math.Log(0.3 / 0.7)},
		{Chosen: 1, InSample: r2, OutOfSample: r2 / 2, Rank: 2, Omega: 0.4, Lambda: math.Log(0.4 / 0.6)},
	}
	checkSplits(t, res, want)
	if res.PBO != 1 {
		t.Errorf("PBO %v, want 1", res.PBO)
	}
}

func checkSplits(t *testing.T, res CSCVResult, want []Split) {
	t.Helper()
	if len(res.Splits) != len(want) {
		t.Fatalf("%d splits, want %d", len(res.Splits), len(want))
	}
	for i, w := range want {
		g := res.Splits[i]
		if g.Chosen != w.Chosen || g.Rank != w.Rank || math.Abs(g.Omega-w.Omega) > 1e-15 ||
			math.Abs(g.Lambda-w.Lambda) > 1e-15 || math.Abs(g.InSample-w.InSample) > 1e-12 ||
			math.Abs(g.OutOfSample-w.OutOfSample) > 1e-12 {
			t.Errorf("split %d = %+v, want %+v", i, g, w)
		}
	}
}

// The first T mod S returns are left out, whatever they hold; the
// Sharpe ratios do not change when a run is scaled, even past where its
// squares overflow; runs that do not vary get 0 or ±Inf, never NaN.
func TestCSCVEdges(t *testing.T) {
	cols := testColumns(11, 130, 6) // 130 = 8·16 + 2
	base := cscvOf(t, 8, cols...)
	if base.Skipped != 2 || base.BlockRows != 16 || base.Combinations != 70 {
		t.Fatalf("%d skipped, %d rows a block, %d combinations", base.Skipped, base.BlockRows, base.Combinations)
	}

	changed := make([][]float64, len(cols))
	for j, c := range cols {
		changed[j] = slices.Clone(c)
		changed[j][0], changed[j][1] = 1e6*float64(j), -1e6
	}
	changed[2] = scaled(changed[2], 1e250) // Σr² would be 1e496
	changed[4] = scaled(changed[4], 1e-300)
	got := cscvOf(t, 8, changed...)
	for i, s := range got.Splits {
		b := base.Splits[i]
		if s.Chosen != b.Chosen || s.Rank != b.Rank || math.Abs(s.InSample-b.InSample) > 1e-13*math.Abs(b.InSample) ||
			math.Abs(s.OutOfSample-b.OutOfSample) > 1e-13*math.Abs(b.OutOfSample) {
			t.Fatalf("split %d: %+v, want %+v", i, s, b)
		}
	}

	// Runs that never trade, trade only in the first half, and earn a
	// constant 0.1% a bar (a risk-free asset: +Inf, always chosen, always
	// best out of sample).
	flat := make([]float64, 130)
	late := slices.Clone(cols[0])
	clear(late[:66])
	riskFree := make([]float64, 130)
	for i := range riskFree {
		riskFree[i] = 0.001
	}
	res := cscvOf(t, 8, cols[0], flat, late, cols[1], riskFree)
	for i, s := range res.Splits {
		if s.Chosen != 4 || !math.IsInf(s.InSample, 1) || s.Rank != 5 || math.IsNaN(s.Lambda) {
			t.Fatalf("split %d: %+v, want the risk-free run, ranked 5 of 5", i, s)
		}
	}
	if res.PBO != 0 {
		t.Errorf("PBO %v with a risk-free run, want 0", res.PBO)
	}
	res = cscvOf(t, 8, cols[0], flat, late, cols[1])
	for i, s := range res.Splits {
		if math.IsNaN(s.InSample) || math.IsNaN(s.OutOfSample) || math.IsNaN(s.Lambda) || s.Rank < 1 || s.Rank > 4 {
			t.Fatalf("split %d: %+v", i, s)
		}
		if s.Chosen == 1 && s.InSample != 0 {
			t.Fatalf("split %d: the flat run has Sharpe ratio %v", i, s.InSample)
		}
	}
}

func scaled(xs []float64, k float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * k
	}
	return out
}

func TestCSCVCancelled(t *testing.T) {
	c, err := NewCSCV(64, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, col := range testColumns(1, 64, 3) {
		if err := c.Add(col); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Result(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestCombinations(t *testing.T) {
	c := []int{0, 1, 2}
	var all [][]int
	for {
		all = append(all, slices.Clone(c))
		if !nextCombination(c, 5) {
			break
		}
	}
	if len(all) != binomial(5, 3) || len(all) != 10 || !slices.Equal(all[1], []int{0, 1, 3}) || !slices.Equal(all[9], []int{2, 3, 4}) {
		t.Errorf("combinations of 3 in 5: %v", all)
	}
	out := make([]int, 2)
	complement([]int{1, 3, 4}, 5, out)
	if !slices.Equal(out, []int{0, 2}) {
		t.Errorf("complement of 1 3 4 in 5: %v", out)
	}
	if binomial(16, 8) != 12870 || binomial(20, 10) != 184756 {
		t.Errorf("C(16, 8) = %d, C(20, 10) = %d", binomial(16, 8), binomial(20, 10))
	}
}

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		pbo, dsr float64
		want     Verdict
		words    string
	}{
		{0.05, 0.99, VerdictLikelyReal, "likely real"},
		{0.1, 0.95, VerdictLikelyReal, "likely real"},
		{0.11, 0.99, VerdictInconclusive, "inconclusive"},
		{0.05, 0.9, VerdictInconclusive, "inconclusive"},
		{0.5, 0.5, VerdictInconclusive, "inconclusive"},
		{0.51, 0.99, VerdictLikelyOverfit, "likely overfit"},
		{0.05, 0.49, VerdictLikelyOverfit, "likely overfit"},
		{math.NaN(), 0.99, VerdictNone, "not enough data"},
		{0.05, math.NaN(), VerdictNone, "not enough data"},
	} {
		if got := Judge(c.pbo, c.dsr); got != c.want || got.String() != c.words {
			t.Errorf("Judge(%v, %v) = %v, want %v", c.pbo, c.dsr, got, c.words)
		}
	}
	if Verdict(9).String() != "Verdict(9)" {
		t.Errorf("%v", Verdict(9))
	}
}
