package stats

import (
	"math"
	"testing"
)

// The lower tail of Φ to 20 digits, computed in 60-digit decimal
// arithmetic from Laplace's continued fraction
// Φ(−x) = φ(x)/(x + 1/(x + 2/(x + 3/(x + …)))) with 20,000 terms.
var phiTail = []struct{ x, phi float64 }{
	{-30, 4.90671392714818717732e-198},
	{-20, 2.75362411860623373713e-89},
	{-10, 7.61985302416052545054e-24},
	{-8, 6.22096057427178387436e-16},
	{-5, 2.86651571879193911854e-07},
	{-3, 1.34989803163009457719e-03},
	{-2, 2.27501319481792085853e-02},
}

func TestNormCDFTail(t *testing.T) {
	for _, c := range phiTail {
		got := NormCDF(c.x)
		if r := math.Abs(got-c.phi) / c.phi; r > 1e-15 {
			t.Errorf("Φ(%v) = %.17g, want %.17g (relative %.2g)", c.x, got, c.phi, r)
		}
		// 1 − Φ(x) = Φ(−x): the upper side, to its absolute precision.
		if up := NormCDF(-c.x); math.Abs((1-up)-c.phi) > 2.3e-16 {
			t.Errorf("Φ(%v) = %.17g, want 1 − %.17g", -c.x, up, c.phi)
		}
	}
	if NormCDF(0) != 0.5 || NormCDF(math.Inf(-1)) != 0 || NormCDF(math.Inf(1)) != 1 || !math.IsNaN(NormCDF(math.NaN())) {
		t.Errorf("Φ(0), Φ(±Inf), Φ(NaN) = %v, %v, %v, %v", NormCDF(0), NormCDF(math.Inf(-1)), NormCDF(math.Inf(1)), NormCDF(math.NaN()))
	}
}

func TestNormQuantile(t *testing.T) {
	// Φ⁻¹ inverts the 60-digit tail values to the last bits of x.
	for _, c := range phiTail {
		if got := NormQuantile(c.phi); math.Abs(got-c.x) > 4e-16*math.Abs(c.x) {
			t.Errorf("Φ⁻¹(%.17g) = %.17g, want %v", c.phi, got, c.x)
		}
		// Above 0.5, Φ⁻¹(p) = −Φ⁻¹(1 − p) with 1 − p exact: to the
		// precision 1 − Φ(−x) has when rounded to a float64 (the 1e-10 tail
		// rounds to 1 − 1.00000008e-10).
		if c.phi > 1e-15 {
			p := 1 - c.phi
			if got, want := NormQuantile(p), -NormQuantile(1-p); got != want {
				t.Errorf("Φ⁻¹(%.17g) = %.17g, want −Φ⁻¹(%.17g) = %.17g", p, got, 1-p, want)
			}
		}
	}
	// Round trips over the whole range, down to the smallest subnormal.
	for _, p := range []float64{5e-324, 1e-310, 1e-300, 1e-200, 1e-50, 1e-17, 1e-16, 3e-16, 1e-15, 1e-9,
		0.001, 0.0123, 0.1, 0.25, 0.4999, 0.5, 0.6, 0.9, 0.975, 0.999999} {
		// A unit in the last place of x moves Φ(x) by about x²·1.1e-16
		// (relative) in the tail, and subnormal p have fewer bits.
		x := NormQuantile(p)
		tol := max(2e-15, 4e-16*x*x) * p
		if p < 0x1p-1022 {
			tol = 0x1p-1074 * 4
		}
		if back := NormCDF(x); math.Abs(back-p) > tol {
			t.Errorf("Φ(Φ⁻¹(%v)) = %v (x = %v)", p, back, x)
		}
	}
	if NormQuantile(0.975)-1.959963984540054 > 1e-15 {
		t.Errorf("Φ⁻¹(0.975) = %.17g", NormQuantile(0.975))
	}
	for _, p := range []float64{-0.1, 1.1, math.NaN(), math.Inf(1)} {
		if !math.IsNaN(NormQuantile(p)) {
			t.Errorf("Φ⁻¹(%v) = %v, want NaN", p, NormQuantile(p))
		}
	}
	if !math.IsInf(NormQuantile(0), -1) || !math.IsInf(NormQuantile(1), 1) || NormQuantile(0.5) != 0 {
		t.Errorf("Φ⁻¹(0), Φ⁻¹(1), Φ⁻¹(0.5) = %v, %v, %v", NormQuantile(0), NormQuantile(1), NormQuantile(0.5))
	}
}
