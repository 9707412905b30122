package stats

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
)

// A sweep at the level of the statistics: n strategies that hold a random
// position (long, flat or short, redrawn with probability 1/20 each bar)
// on one random walk of t bars. The strategies numbered in edge (a region
// of the grid) also peek: with probability 3/20 a bar they hold the sign
// of that bar's move, a real edge of about 0.15 Sharpe a bar.
func randomTraders(seed uint64, t, n int, edge []int) [][]float64 {
	g := rand.New(rand.NewPCG(seed, 2))
	walk := make([]float64, t)
	for i := range walk {
		walk[i] = 0.01 * g.NormFloat64()
	}
	cols := make([][]float64, n)
	for j := range cols {
		peeks := slices.Contains(edge, j)
		pos := float64(g.IntN(3) - 1)
		c := make([]float64, t)
		for i := range c {
			if g.Float64() < 0.05 {
				pos = float64(g.IntN(3) - 1)
			}
			p := pos
			if peeks && g.Float64() < 0.15 {
				p = 1
				if walk[i] < 0 {
					p = -1
				}
			}
			c[i] = p * walk[i]
		}
		cols[j] = c
	}
	return cols
}

// robustness is what a sweep reports: PBO by CSCV with the default
// blocks, and the deflated Sharpe ratio of the run with the best Sharpe
// ratio among all.
func robustness(t *testing.T, cols [][]float64) (CSCVResult, Deflated) {
	t.Helper()
	c, err := NewCSCV(len(cols[0]), 0)
	if err != nil {
		t.Fatal(err)
	}
	sharpes := make([]float64, len(cols))
	moments := make([]Moments, len(cols))
	best := 0
	for j, col := range cols {
		if err := c.Add(col); err != nil {
			t.Fatal(err)
		}
		if moments[j], err = ComputeMoments(col); err != nil {
			t.Fatal(err)
		}
		sharpes[j] = moments[j].Sharpe()
		if sharpes[j] > sharpes[best] {
			best = j
		}
	}
	res, err := c.Result(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	d, err := DeflatedSharpe(moments[best], sharpes)
	if err != nil {
		t.Fatal(err)
	}
	return res, d
}

// TestValidationRandomStrategies: strategies without skill look overfit.
// For one sweep PBO and DSR are random quantities: under no skill the DSR
// of the best is roughly uniform (it is a probability calibrated against
// the expected maximum) and PBO spreads around 1/2. So the claims are
// checked over 30 independent sweeps (fixed seeds): the median PBO is
// between 0.4 and 0.6 and at least three quarters of the PBOs lie in
// [0.3, 0.7]; the median DSR of the best is below 0.5, and a DSR above
// 0.95 (a false discovery) happens in at most a tenth of them.
func TestValidationRandomStrategies(t *testing.T) {
	if testing.Short() {
		t.Skip("30 sweeps of 12,870 splits")
	}
	const sweeps, bars, runs = 30, 1500, 50
	var pbos, dsrs []float64
	for s := range sweeps {
		res, d := robustness(t, randomTraders(uint64(s), bars, runs, nil))
		if res.Blocks != 16 || res.Combinations != 12870 {
			t.Fatalf("%d blocks, %d combinations", res.Blocks, res.Combinations)
		}
		pbos, dsrs = append(pbos, res.PBO), append(dsrs, d.DSR)
	}
	slices.Sort(pbos)
	slices.Sort(dsrs)
	t.Logf("PBO: %.3f", pbos)
	t.Logf("DSR of the best: %.3f", dsrs)
	inRange, falseFinds := 0, 0
	for i := range pbos {
		if pbos[i] >= 0.3 && pbos[i] <= 0.7 {
			inRange++
		}
		if dsrs[i] > 0.95 {
			falseFinds++
		}
	}
	if m := median(pbos); m < 0.4 || m > 0.6 {
		t.Errorf("median PBO %.3f, want 0.4 to 0.6", m)
	}
	if 4*inRange < 3*sweeps {
		t.Errorf("%d of %d PBOs in [0.3, 0.7], want three quarters", inRange, sweeps)
	}
	if m := median(dsrs); m >= 0.5 {
		t.Errorf("median DSR of the best %.3f, want below 0.5", m)
	}
	if 10*falseFinds > sweeps {
		t.Errorf("DSR above 0.95 in %d of %d sweeps without skill", falseFinds, sweeps)
	}
}

// TestValidationPlantedEdge: a region of the grid with a real edge is
// found, in every one of 10 sweeps: PBO below 0.1 and the DSR of the best
// above 0.95. The region is 5 runs of 100: V, the variance of the trials'
// Sharpe ratios, counts the edge's spread as well as the noise's, so a
// region that is a large share of the grid raises SR* with it (see
// docs/robustness.md).
func TestValidationPlantedEdge(t *testing.T) {
	if testing.Short() {
		t.Skip("10 sweeps of 12,870 splits")
	}
	const sweeps, bars, runs = 10, 3000, 100
	edge := []int{40, 41, 42, 43, 44}
	for s := range sweeps {
		res, d := robustness(t, randomTraders(uint64(100+s), bars, runs, edge))
		t.Logf("sweep %d: PBO %.4f, DSR %.6f (SR %.4f against SR* %.4f), out-of-sample loss %.4f",
			s, res.PBO, d.DSR, d.Sharpe, d.Threshold, res.OOSLossProbability)
		if res.PBO >= 0.1 || d.DSR <= 0.95 {
			t.Errorf("sweep %d: PBO %.4f (want < 0.1), DSR %.4f (want > 0.95)", s, res.PBO, d.DSR)
		}
	}
}

func median(sorted []float64) float64 { return percentileSorted(sorted, 50) }
