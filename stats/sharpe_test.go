package stats

import (
	"errors"
	"math"
	"testing"
)

// The worked example of the deflated Sharpe ratio paper: D. H. Bailey and
// M. López de Prado, "The Deflated Sharpe Ratio: Correcting for Selection
// Bias, Backtest Overfitting and Non-Normality", Journal of Portfolio
// Management 40(5), 2014, pp. 94–107 (SSRN 2460551), its numerical example
// (pp. 9–10 of the SSRN version). A strategist ran N = 100 trials whose
// annualised Sharpe ratios have variance 1/2, and reports the best, an
// annualised Sharpe ratio of 2.5 over five years of daily returns
// (T = 1250, 250 a year) with skewness −3 and kurtosis 10. Per period:
// SR = 2.5/√250, V = 0.5/250. The paper prints SR* = 0.1132 (non
// annualised) and DSR = 0.9004; it adds that 46 trials would have given
// 0.9505, and that with normal returns (skewness 0, kurtosis 3) 88 trials
// is the most that keeps the DSR above 0.95.
//
// The paper prints four decimals, so these checks hold to the half unit of
// the fourth (5e-5); the unrounded values agree with scipy to 1e-12 in
// TestAgainstPython.
var dsrPaper = struct {
	sr, v       float64
	n, t        int
	skew, kurt  float64
	sr0, dsr    float64 // printed
	dsr46       float64 // printed, N = 46
	normalLastN int     // normal returns: the largest N with DSR ≥ 0.95
}{
	sr: 2.5 / math.Sqrt(250), v: 0.5 / 250, n: 100, t: 1250, skew: -3, kurt: 10,
	sr0: 0.1132, dsr: 0.9004, dsr46: 0.9505, normalLastN: 88,
}

const printedHalfUnit = 5e-5

func TestDeflatedSharpePaperExample(t *testing.T) {
	p := dsrPaper
	sr0, err := ExpectedMaxSharpe(p.n, p.v)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(sr0-p.sr0) > printedHalfUnit {
		t.Errorf("SR* = %.8f, the paper prints %.4f", sr0, p.sr0)
	}
	dsr, err := PSR(p.sr, sr0, p.t, p.skew, p.kurt)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(dsr-p.dsr) > printedHalfUnit {
		t.Errorf("DSR = %.8f, the paper prints %.4f", dsr, p.dsr)
	}
	sr46, _ := ExpectedMaxSharpe(46, p.v)
	if got, _ := PSR(p.sr, sr46, p.t, p.skew, p.kurt); math.Abs(got-p.dsr46) > printedHalfUnit {
		t.Errorf("DSR after 46 trials = %.8f, the paper prints %.4f", got, p.dsr46)
	}
	for n, above := range map[int]bool{p.normalLastN: true, p.normalLastN + 1: false} {
		srN, _ := ExpectedMaxSharpe(n, p.v)
		if got, _ := PSR(p.sr, srN, p.t, 0, 3); (got >= 0.95) != above {
			t.Errorf("normal returns, %d trials: DSR %.6f, want ≥ 0.95 %v", n, got, above)
		}
	}
	// The kurtosis is not excess: 7 in place of 10 misses the printed value.
	if got, _ := PSR(p.sr, sr0, p.t, p.skew, p.kurt-3); math.Abs(got-p.dsr) <= printedHalfUnit {
		t.Errorf("DSR with excess kurtosis = %.6f matches the paper too", got)
	}

	// The same through DeflatedSharpe: trials whose Sharpe ratios have the
	// sample variance V (two values ±a have variance 2a²), and best's
	// moments.
	a := math.Sqrt(p.v / 2)
	best := Moments{T: p.t, Mean: p.sr, Std: 1, Skew: p.skew, Kurt: p.kurt}
	d, err := DeflatedSharpe(best, []float64{a, -a})
	if err != nil {
		t.Fatal(err)
	}
	sr2, _ := ExpectedMaxSharpe(2, p.v)
	want, _ := PSR(p.sr, sr2, p.t, p.skew, p.kurt)
	if d.Trials != 2 || math.Abs(d.Variance-p.v) > 1e-18 || d.Threshold != sr2 || d.DSR != want || d.Sharpe != p.sr {
		t.Errorf("DeflatedSharpe = %+v, want V %v, SR* %v, DSR %v", d, p.v, sr2, want)
	}
}

// The probabilistic Sharpe ratio paper: D. H. Bailey and M. López de
// Prado, "The Sharpe Ratio Efficient Frontier", Journal of Risk 15(2),
// 2012 (SSRN 1821643), its minimum track record length example, whose
// figures its appendix's Python code reproduces: monthly returns with an
// annualised Sharpe ratio of 2 against a benchmark of 1 (SR = 2/√12,
// SR* = 1/√12), skewness −0.72 and kurtosis 5.78, at 95% confidence need
// MinTRL = 59.895 months. PSR at that length is 0.95 by definition; the
// printed length is rounded to 5e-4 month, which moves the PSR by less
// than 1e-6 (dPSR/dT ≈ 1.4e-3 there).
func TestPSRPaperExample(t *testing.T) {
	sr, srStar, skew, kurt := 2/math.Sqrt(12), 1/math.Sqrt(12), -0.72, 5.78
	got, err := MinTRL(sr, srStar, skew, kurt, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-59.895) > 5e-4 {
		t.Errorf("MinTRL = %.6f, the paper prints 59.895", got)
	}
	// PSR at the printed (fractional) length: the formula with T − 1 =
	// 58.895.
	z := (sr - srStar) * math.Sqrt(59.895-1) / math.Sqrt(1-skew*sr+(kurt-1)/4*sr*sr)
	if psr := NormCDF(z); math.Abs(psr-0.95) > 1e-6 {
		t.Errorf("PSR at 59.895 months = %.9f, want 0.95 to 1e-6", psr)
	}
	// And through PSR, which counts whole returns: 59 months fall short of
	// 95%, 60 reach it.
	p59, _ := PSR(sr, srStar, 59, skew, kurt)
	p60, _ := PSR(sr, srStar, 60, skew, kurt)
	if !(p59 < 0.95 && p60 > 0.95) || math.Abs(p60-0.95) > 2e-3 {
		t.Errorf("PSR at 59 months %.6f, at 60 %.6f: want either side of 0.95", p59, p60)
	}
	if inf, err := MinTRL(srStar, srStar, skew, kurt, 0.95); err != nil || !math.IsInf(inf, 1) {
		t.Errorf("MinTRL with SR = SR* = %v, %v, want +Inf", inf, err)
	}
}

func TestPSRNormalByHand(t *testing.T) {
	// Normal returns: the variance term is 1 + SR²/2.
	sr, n := 0.1, 400
	z := sr * math.Sqrt(float64(n-1)) / math.Sqrt(1+sr*sr/2)
	got, err := PSR(sr, 0, n, 0, 3)
	if err != nil || math.Abs(got-NormCDF(z)) > 1e-16 {
		t.Errorf("PSR = %v, %v, want %v", got, err, NormCDF(z))
	}
}

func TestPSRRefuses(t *testing.T) {
	for _, c := range []struct {
		name       string
		sr, star   float64
		t          int
		skew, kurt float64
		kind       Kind
		arg        string
	}{
		{"one return", 0.1, 0, 1, 0, 3, TooFew, "t"},
		{"NaN sr", math.NaN(), 0, 10, 0, 3, NotFinite, "sr"},
		{"infinite benchmark", 0.1, math.Inf(1), 10, 0, 3, NotFinite, "srStar"},
		{"NaN kurtosis", 0.1, 0, 10, 0, math.NaN(), NotFinite, "kurt"},
		// 1 − 5·0.5 + 0 < 0: moments no sample has.
		{"negative variance term", 0.5, 0, 100, 5, 1, Undefined, ""},
		// Two-point returns make the term a square, 0 at SR = 2/γ3.
		{"zero variance term", 1, 0, 100, 2, 5, Undefined, ""},
	} {
		got, err := PSR(c.sr, c.star, c.t, c.skew, c.kurt)
		var e *Error
		if !math.IsNaN(got) || !errors.As(err, &e) || e.Kind != c.kind || e.Arg != c.arg || !errors.Is(err, &Error{Kind: c.kind, Index: -1}) {
			t.Errorf("%s: PSR = %v, %v (%#v), want NaN and a %v error on %q", c.name, got, err, e, c.kind, c.arg)
		}
	}
}

func TestExpectedMaxSharpeRefuses(t *testing.T) {
	if _, err := ExpectedMaxSharpe(1, 1); !errors.Is(err, ErrTooFew) {
		t.Errorf("one trial: %v", err)
	}
	if _, err := ExpectedMaxSharpe(10, -1); !errors.Is(err, ErrBadArgument) {
		t.Errorf("negative variance: %v", err)
	}
	if _, err := ExpectedMaxSharpe(10, math.Inf(1)); !errors.Is(err, ErrNotFinite) {
		t.Errorf("infinite variance: %v", err)
	}
	if got, err := ExpectedMaxSharpe(10, 0); got != 0 || err != nil {
		t.Errorf("trials that all agree: SR* = %v, %v, want 0", got, err)
	}
}

func TestDeflatedSharpeRefuses(t *testing.T) {
	best := Moments{T: 100, Mean: 0.01, Std: 0.1, Skew: 0, Kurt: 3}
	if _, err := DeflatedSharpe(best, []float64{0.1}); !errors.Is(err, ErrTooFew) {
		t.Errorf("one trial: %v", err)
	}
	var e *Error
	if _, err := DeflatedSharpe(best, []float64{0.1, math.NaN(), 0}); !errors.As(err, &e) || e.Kind != NotFinite || e.Index != 1 {
		t.Errorf("a NaN trial: %v", err)
	}
	flat := Moments{T: 100, Mean: 0, Std: 0, Skew: math.NaN(), Kurt: math.NaN()}
	if _, err := DeflatedSharpe(flat, []float64{0.1, 0}); !errors.Is(err, ErrZeroVariance) || !errors.As(err, &e) || e.Op != "DeflatedSharpe" {
		t.Errorf("a best run that never trades: %v", err)
	}
}
