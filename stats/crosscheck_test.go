package stats

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"stratbench/internal/testenv"
)

// testColumns makes n runs of t returns from a seeded generator: each run
// draws r = σ·(z + a·(z² − 1)) + μ with z standard normal, so that the
// runs have skewness (a from −0.3 to 0.3) and fat tails, a fifth of them
// an edge μ > 0, and every fourth shares a part of its noise with the
// previous one.
func testColumns(seed uint64, t, n int) [][]float64 {
	g := rand.New(rand.NewPCG(seed, 1))
	cols := make([][]float64, n)
	for j := range cols {
		a := -0.3 + 0.6*float64(j)/float64(max(1, n-1))
		mu := 0.0
		if j%5 == 0 {
			mu = 0.0003
		}
		col := make([]float64, t)
		for i := range col {
			z := g.NormFloat64()
			col[i] = 0.01*(z+a*(z*z-1)) + mu
			if j%4 == 3 {
				col[i] = 0.5*col[i] + 0.5*cols[j-1][i]
			}
		}
		cols[j] = col
	}
	return cols
}

type crossOut struct {
	Numpy, Scipy                  string
	Mean, Std, Skew, Kurt, Sharpe []float64
	PSR0                          []float64 `json:"psr0"`
	DSR                           struct {
		Best                     int
		Variance, Threshold, DSR float64
	}
	CSCV struct {
		PBO         float64
		OOSLoss     float64 `json:"oos_loss"`
		Lambdas     []float64
		Chosen      []int
		InSample    []float64 `json:"in_sample"`
		OutOfSample []float64 `json:"out_of_sample"`
		Ranks       []float64
		Skipped     int
	}
	CDF, PPF    []float64
	Percentiles [][]float64
	Paper       struct{ SR0, DSR float64 }
}

// TestAgainstPython computes the moments, the PSR of every run, the DSR of
// the best and PBO by CSCV of a fixed random matrix here and in
// testdata/crosscheck.py (numpy and scipy, written from the papers), and
// requires the same numbers to 1e-9 (relative), the same chosen runs,
// ranks and PBO exactly, and the normal functions and percentiles to the
// last bits.
func TestAgainstPython(t *testing.T) {
	py := testenv.Python(t, "numpy", "scipy")
	const T, N, S = 1000, 40, 12 // 1000 = 12·83 + 4: the first 4 rows are left out
	cols := testColumns(7, T, N)

	dir := t.TempDir()
	var raw bytes.Buffer
	for _, c := range cols {
		if err := binary.Write(&raw, binary.LittleEndian, c); err != nil {
			t.Fatal(err)
		}
	}
	matrix := filepath.Join(dir, "matrix.f64")
	if err := os.WriteFile(matrix, raw.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	cdfX := []float64{-38, -30, -20, -10, -8, -5, -3, -1.5, -1, -1e-10, 0, 1e-10, 0.5, 1, 2, 3, 5, 8}
	ppfP := []float64{1e-300, 1e-100, 1e-20, 1e-16, 1e-10, 1e-5, 0.001, 0.01, 0.025, 0.05, 0.1, 0.3,
		0.5, 0.7, 0.9, 0.975, 0.99, 0.999, 1 - 1e-10}
	g := rand.New(rand.NewPCG(3, 3))
	many := make([]float64, 1001)
	for i := range many {
		many[i] = g.NormFloat64()
	}
	sets := [][]float64{many, {1, 2, 3, 4}, {5}, {3, 1, 2, 2, 2, 7}, {-1e-3, 0.2, -0.05, 1e6, 0}, cols[0][:37]}
	in := map[string]any{
		"matrix": matrix, "t": T, "n": N, "blocks": S, "cdf_x": cdfX, "ppf_p": ppfP, "percentile_sets": sets,
		"paper": map[string]any{"sr": dsrPaper.sr, "v": dsrPaper.v, "n": dsrPaper.n, "t": dsrPaper.t,
			"skew": dsrPaper.skew, "kurt": dsrPaper.kurt},
	}
	inPath := filepath.Join(dir, "in.json")
	b, _ := json.Marshal(in)
	if err := os.WriteFile(inPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, filepath.Join("testdata", "crosscheck.py"), inPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("crosscheck.py: %v\n%s", err, stderr.String())
	}
	var want crossOut
	if err := json.Unmarshal(stdout, &want); err != nil {
		t.Fatalf("crosscheck.py's output: %v", err)
	}
	t.Logf("numpy %s, scipy %s", want.Numpy, want.Scipy)

	const rel = 1e-9
	worst := map[string]float64{}
	near := func(what string, got, exp, tol float64) {
		t.Helper()
		d := math.Abs(got - exp)
		if got == exp {
			d = 0
		}
		r := d / math.Max(math.Abs(exp), 1e-300)
		worst[what] = math.Max(worst[what], r)
		if !(r <= tol) {
			t.Errorf("%s: %.17g here, %.17g in scipy (relative %.3g > %g)", what, got, exp, r, tol)
		}
	}

	sharpes := make([]float64, N)
	moments := make([]Moments, N)
	for j, c := range cols {
		m, err := ComputeMoments(c)
		if err != nil {
			t.Fatal(err)
		}
		moments[j], sharpes[j] = m, m.Sharpe()
		near("mean", m.Mean, want.Mean[j], rel)
		near("std", m.Std, want.Std[j], rel)
		near("skew", m.Skew, want.Skew[j], rel)
		near("kurt", m.Kurt, want.Kurt[j], rel)
		near("sharpe", m.Sharpe(), want.Sharpe[j], rel)
		psr, err := m.PSR(0)
		if err != nil {
			t.Fatal(err)
		}
		near("psr0", psr, want.PSR0[j], rel)
	}
	best := 0
	for j, s := range sharpes {
		if s > sharpes[best] {
			best = j
		}
	}
	if best != want.DSR.Best {
		t.Fatalf("best run %d here, %d in numpy", best, want.DSR.Best)
	}
	d, err := DeflatedSharpe(moments[best], sharpes)
	if err != nil {
		t.Fatal(err)
	}
	near("dsr variance", d.Variance, want.DSR.Variance, rel)
	near("dsr threshold", d.Threshold, want.DSR.Threshold, rel)
	near("dsr", d.DSR, want.DSR.DSR, rel)

	c, err := NewCSCV(T, S)
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
	w := want.CSCV
	if res.Combinations != 924 || len(w.Lambdas) != res.Combinations || res.Skipped != w.Skipped || res.Skipped != 4 {
		t.Fatalf("%d combinations (numpy %d), %d rows skipped (numpy %d)", res.Combinations, len(w.Lambdas), res.Skipped, w.Skipped)
	}
	if res.PBO != w.PBO || res.OOSLossProbability != w.OOSLoss {
		t.Errorf("PBO %v, loss %v here; %v, %v in numpy", res.PBO, res.OOSLossProbability, w.PBO, w.OOSLoss)
	}
	for i, s := range res.Splits {
		if s.Chosen != w.Chosen[i] || s.Rank != w.Ranks[i] {
			t.Fatalf("split %d: run %d ranked %v here, run %d ranked %v in numpy", i, s.Chosen, s.Rank, w.Chosen[i], w.Ranks[i])
		}
		near("lambda", s.Lambda, w.Lambdas[i], rel)
		near("in-sample sharpe", s.InSample, w.InSample[i], rel)
		near("out-of-sample sharpe", s.OutOfSample, w.OutOfSample[i], rel)
	}
	t.Logf("PBO %v, out-of-sample loss %v, DSR of run %d %v", res.PBO, res.OOSLossProbability, best, d.DSR)

	// scipy's ndtr loses about 1e-16·x² (relative) in the lower tail to the
	// rounding of x/√2, which NormCDF corrects (TestNormCDFTail holds it
	// to 60-digit values); allow scipy its error.
	for i, x := range cdfX {
		near("Φ", NormCDF(x), want.CDF[i], 4e-16*max(1, x*x))
	}
	for i, p := range ppfP {
		near("Φ⁻¹", NormQuantile(p), want.PPF[i], 1e-15)
	}
	for i, set := range sets {
		for k, p := range []float64{5, 25, 50, 75, 95} {
			near("percentile", Percentile(set, p), want.Percentiles[i][k], 0)
		}
	}
	sr0, _ := ExpectedMaxSharpe(dsrPaper.n, dsrPaper.v)
	dsr, _ := PSR(dsrPaper.sr, sr0, dsrPaper.t, dsrPaper.skew, dsrPaper.kurt)
	near("paper SR*", sr0, want.Paper.SR0, 1e-12)
	near("paper DSR", dsr, want.Paper.DSR, 1e-12)
	t.Logf("largest relative differences: %v", worst)
}
