package stats

import "math"

// NormCDF is Φ, the standard normal distribution function:
// Φ(x) = erfc(−x/√2)/2, through math.Erfc so that the lower tail keeps its
// relative accuracy (Φ(−30) ≈ 4.9e-198, where 1 + erf would round to 0).
// The argument −x/√2 is carried to twice the working precision and its
// rounding corrected to first order (erfc(t + δ) ≈ erfc(t) −
// δ·2/√π·e^(−t²)): without it the rounding of t alone costs a relative
// error of about 1e-16·x² (1e-13 at x = −30). The result is within a few
// units in the last place of Φ computed to 60 digits (TestNormCDFTail).
func NormCDF(x float64) float64 {
	if math.IsInf(x, 0) {
		return max(0, math.Copysign(1, x))
	}
	t := -x * invSqrt2Hi
	d := math.FMA(-x, invSqrt2Hi, -t) + -x*invSqrt2Lo // −x/√2 − t
	return 0.5 * (math.Erfc(t) - d*(2/math.SqrtPi)*math.Exp(-t*t))
}

// 1/√2 = invSqrt2Hi + invSqrt2Lo to about 1e-33.
const (
	invSqrt2Hi = 0.70710678118654757274
	invSqrt2Lo = -4.833646656726456518593584429912790625e-17
)

// NormQuantile is Φ⁻¹, the standard normal quantile function: the x with
// Φ(x) = p. NormQuantile(0) = −Inf, NormQuantile(1) = +Inf, and p outside
// [0, 1] or NaN gives NaN.
//
// The start is math.Erfcinv (Wichura's AS241 approximation inside), taken
// on the smaller tail min(p, 1 − p), which is exact in floating point for
// p ≥ 0.5; Halley steps on NormCDF then remove the error Erfcinv's own
// 1 − 2p carries for small p. The result agrees with scipy's ndtri to a
// few units in the last place (see TestNormAgainstScipy).
func NormQuantile(p float64) float64 {
	switch {
	case math.IsNaN(p) || p < 0 || p > 1:
		return math.NaN()
	case p == 0:
		return math.Inf(-1)
	case p == 1:
		return math.Inf(1)
	case p > 0.5:
		return -lowerQuantile(1 - p) // 1 − p is exact for p in [0.5, 1]
	}
	return lowerQuantile(p)
}

// upperQuantile is Φ⁻¹(1 − q) for a small q given as itself, without the
// rounding 1 − q would bring.
func upperQuantile(q float64) float64 { return -NormQuantile(q) }

// lowerQuantile is Φ⁻¹(p) for p in (0, 0.5].
func lowerQuantile(p float64) float64 {
	var x float64
	if 2*p > 1e-15 {
		x = -math.Sqrt2 * math.Erfcinv(2*p)
	} else {
		// 1 − 2p rounds to 1 inside Erfcinv: start from the tail's
		// asymptotic expansion instead, x ≈ −√(L − ln L − ln 2π) with
		// L = −2 ln p, and bring it close by Newton's method on
		// ln Φ(x) = ln p (ln Φ is nearly quadratic out there, where Φ
		// itself is too steep for Halley from afar).
		l := -2 * logOf(p)
		x = -math.Sqrt(l - math.Log(l) - math.Log(2*math.Pi))
		for range 8 {
			c := NormCDF(x)
			if c == 0 {
				break
			}
			h := math.Exp(x * x / 4)
			step := (logOf(c) - logOf(p)) * (c * h * h * math.Sqrt(2*math.Pi)) // / (d ln Φ/dx = φ/Φ)
			if !finite(step) {
				break
			}
			x -= step
			if math.Abs(step) <= 1e-15*math.Abs(x) {
				break
			}
		}
	}
	// Halley's method on f(x) = Φ(x) − p: with u = f/φ,
	// x ← x − u/(1 + x·u/2). Cubic convergence: one step from Erfcinv's
	// start, a few from the asymptotic one.
	for range 6 {
		// u = (Φ(x) − p)/φ(x), with 1/φ(x) = √(2π)·e^(x²/2) applied in two
		// halves: e^(x²/2) alone overflows below x ≈ −37.7, where Φ(x) − p
		// is still a subnormal number.
		e := NormCDF(x) - p
		h := math.Exp(x * x / 4)
		u := e * h * h * math.Sqrt(2*math.Pi)
		if !finite(u) {
			break
		}
		step := u / (1 + x*u/2)
		if !finite(step) {
			break
		}
		x -= step
		if math.Abs(step) <= 1e-16*math.Abs(x) {
			break
		}
	}
	return x
}

// logOf is math.Log, right for subnormal x too (math.Log on amd64 gives
// ln 2⁻¹⁰²³ for all of them).
func logOf(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p64) - 64*math.Ln2
	}
	return math.Log(x)
}
