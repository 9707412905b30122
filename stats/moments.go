package stats

import (
	"math"
	"slices"
)

// Moments describes a sample of per-period returns as the PSR and the DSR
// need it. The estimators are those of the papers' reference code and of
// scipy's defaults (scipy.stats.skew and scipy.stats.kurtosis with
// fisher=False, both with bias=True): with m_k = (1/T)·Σ(r − mean)^k,
//
//	Std  = √(Σ(r − mean)²/(T − 1))   the sample standard deviation
//	Skew = m3 / m2^(3/2)              γ3, biased (moment) estimator
//	Kurt = m4 / m2²                   γ4, biased, not excess: 3 for a normal
//
// and the Sharpe ratio Mean/Std is per period, not annualised.
type Moments struct {
	T    int     // number of returns
	Mean float64 // arithmetic mean
	Std  float64 // sample standard deviation (divisor T − 1)
	Skew float64 // γ3
	Kurt float64 // γ4, non-excess
}

// ComputeMoments gives the moments of the returns r. Fewer than two
// returns are a TooFew error, a NaN or an infinity a NotFinite error. When
// all the returns are equal the error is ZeroVariance and the Moments
// returned alongside still hold T, Mean (the common value) and Std = 0,
// with Skew and Kurt NaN, so that Sharpe still gives the run a Sharpe
// ratio.
//
// It takes two passes (the mean, then the centred powers) over the
// deviations scaled by their largest magnitude, so that no finite input
// overflows.
func ComputeMoments(r []float64) (Moments, error) {
	const op = "ComputeMoments"
	if err := checkFinite(op, "returns", r); err != nil {
		return Moments{}, err
	}
	n := len(r)
	if n < 2 {
		return Moments{}, errorf(op, "returns", TooFew, -1, "%d returns, need at least 2", n)
	}
	s := sumsOf(r, true)
	if s.flat {
		return Moments{T: n, Mean: s.mean(), Skew: math.NaN(), Kurt: math.NaN()},
			errorf(op, "returns", ZeroVariance, -1, "all %d returns are %v", n, r[0])
	}
	fn := float64(n)
	m2, m3, m4 := s.s2/fn, s.s3/fn, s.s4/fn
	return Moments{
		T:    n,
		Mean: s.mean(),
		Std:  s.std(),
		Skew: m3 / math.Pow(m2, 1.5),
		Kurt: m4 / (m2 * m2),
	}, nil
}

// Sharpe is the per-period Sharpe ratio Mean/Std. A sample that does not
// vary (Std = 0) has Sharpe 0 when its mean is 0 (a run that never
// trades), +Inf or −Inf by the sign of a non-zero mean: the convention CSCV
// uses too.
func (m Moments) Sharpe() float64 {
	if m.Std == 0 {
		return zeroVarianceSharpe(m.Mean)
	}
	return m.Mean / m.Std
}

// PSR is the probabilistic Sharpe ratio of the sample against the
// benchmark srStar (see the package function PSR). A sample that does not
// vary is a ZeroVariance error.
func (m Moments) PSR(srStar float64) (float64, error) {
	if m.Std == 0 {
		return math.NaN(), errorf("Moments.PSR", "returns", ZeroVariance, -1, "the returns do not vary")
	}
	return PSR(m.Sharpe(), srStar, m.T, m.Skew, m.Kurt)
}

func zeroVarianceSharpe(mean float64) float64 {
	switch {
	case mean > 0:
		return math.Inf(1)
	case mean < 0:
		return math.Inf(-1)
	}
	return 0
}

func constant(r []float64) bool {
	for _, x := range r[1:] {
		if x != r[0] {
			return false
		}
	}
	return true
}

// sums are the sums the moments of a sample come from, in a scale where
// nothing overflows: when the largest magnitude is outside [2⁻⁴⁰⁰, 2⁴⁰⁰]
// the values are divided by 2^e (exactly), e its binary exponent, so that
// they lie in [−1, 1] (e is 0 otherwise); the centred values y − ȳ are
// divided again by their largest magnitude, scale, before their powers
// are summed.
type sums struct {
	n          int
	e          int
	meanY      float64 // the mean of the values over 2^e
	scale      float64 // max |y − ȳ|
	s2, s3, s4 float64 // Σ((y − ȳ)/scale)^k
	flat       bool    // the values are all equal (or so nearly, next to the largest, that the scaling makes them so)
}

// scaleExp is the binary exponent e by which values whose largest
// magnitude is big are scaled (divided by 2^e) before their squares are
// summed: 0, no scaling, unless big is beyond 2^±400.
func scaleExp(big float64) int {
	if big == 0 || (big >= 0x1p-400 && big <= 0x1p400) {
		return 0
	}
	_, e := math.Frexp(big)
	return e
}

// unscale is x/2^e, exactly (but for underflow).
func unscale(x float64, e int) float64 {
	if e == 0 {
		return x
	}
	return math.Ldexp(x, -e)
}

// sumsOf sums finite xs, at least two; s3 and s4 only when higher.
func sumsOf(xs []float64, higher bool) sums {
	s := sums{n: len(xs)}
	if constant(xs) {
		s.meanY, s.flat = xs[0], true
		return s
	}
	big := 0.0
	for _, x := range xs {
		big = max(big, math.Abs(x))
	}
	s.e = scaleExp(big)
	for _, x := range xs {
		s.meanY += unscale(x, s.e)
	}
	s.meanY /= float64(len(xs))
	for _, x := range xs {
		s.scale = max(s.scale, math.Abs(unscale(x, s.e)-s.meanY))
	}
	if s.scale == 0 {
		s.flat = true
		return s
	}
	for _, x := range xs {
		d := (unscale(x, s.e) - s.meanY) / s.scale
		d2 := d * d
		s.s2 += d2
		if higher {
			s.s3 += d2 * d
			s.s4 += d2 * d2
		}
	}
	return s
}

func (s sums) mean() float64 { return math.Ldexp(s.meanY, s.e) }

// stdY is the sample standard deviation over 2^e.
func (s sums) stdY() float64 {
	if s.flat {
		return 0
	}
	return s.scale * math.Sqrt(s.s2/float64(s.n-1))
}

// std is the sample standard deviation (+Inf when it passes MaxFloat64).
func (s sums) std() float64 { return math.Ldexp(s.stdY(), s.e) }

// variance is the sample variance (+Inf when it passes MaxFloat64).
func (s sums) variance() float64 {
	sd := s.std()
	return sd * sd
}

// sharpe is mean/std, computed in the scaled units, with the convention of
// Moments.Sharpe when the values do not vary.
func (s sums) sharpe() float64 {
	if s.flat {
		return zeroVarianceSharpe(s.mean())
	}
	return s.meanY / s.stdY()
}

// Percentile is the p-th percentile (p in [0, 100]) of values by numpy's
// default rule ("linear", type 7 of Hyndman & Fan): with the values sorted
// as x[0] ≤ … ≤ x[n−1] and h = (n − 1)·p/100, it is x[⌊h⌋] +
// (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]), computed as numpy.percentile computes it
// (the same interpolation from whichever end is nearer), so that the
// numbers agree to the last bit. NaN values are left out; no values, or p
// outside [0, 100], give NaN. values is not modified.
func Percentile(values []float64, p float64) float64 {
	s := make([]float64, 0, len(values))
	for _, v := range values {
		if !math.IsNaN(v) {
			s = append(s, v)
		}
	}
	slices.Sort(s)
	return percentileSorted(s, p)
}

// percentileSorted is Percentile of values already sorted, with no NaN.
func percentileSorted(s []float64, p float64) float64 {
	if len(s) == 0 || !(p >= 0 && p <= 100) {
		return math.NaN()
	}
	h := float64(len(s)-1) * (p / 100)
	lo := math.Floor(h)
	i := int(lo)
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return lerp(s[i], s[i+1], h-lo)
}

// lerp is numpy's _lerp: a + (b − a)·t, from b's end when t ≥ 0.5, and a
// itself when a and b are equal (infinities included, where the formula
// would give NaN). One infinite end wins over a finite one.
func lerp(a, b, t float64) float64 {
	switch {
	case a == b || t == 0:
		return a
	case math.IsInf(a, 0) && math.IsInf(b, 0):
		return math.NaN()
	case math.IsInf(a, 0):
		return a
	case math.IsInf(b, 0):
		return b
	}
	d := b - a
	if t >= 0.5 {
		return b - d*(1-t)
	}
	return a + d*t
}
