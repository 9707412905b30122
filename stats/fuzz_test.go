package stats

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// floats reads up to max little-endian float64s from data.
func floats(data []byte, max int) []float64 {
	n := min(len(data)/8, max)
	out := make([]float64, n)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
	}
	return out
}

func fuzzBytes(xs ...float64) []byte {
	b := make([]byte, 0, 8*len(xs))
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

func addSeeds(f *testing.F) {
	f.Add(fuzzBytes(0.01, -0.02, 0.03, 0.0, 0.005))
	f.Add(fuzzBytes(0, 0, 0, 0))
	f.Add(fuzzBytes(1e300, -1e300, math.MaxFloat64, -math.MaxFloat64, 5e-324))
	f.Add(fuzzBytes(math.NaN(), 1, 2))
	f.Add(fuzzBytes(-1.5, 1, -1, 2, 1e-310, 0.5))
	f.Add(fuzzBytes(100, 110, 99, 0, 50, -50))
	f.Add([]byte{1, 2, 3})
}

// mustBePackageError fails on an error that is not a *Error of a known
// Kind.
func mustBePackageError(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Kind < TooFew || e.Kind > BadArgument {
		t.Fatalf("error %v (%T), want a *Error", err, err)
	}
}

func FuzzMoments(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := floats(data, 4096)
		m, err := ComputeMoments(r)
		if err != nil {
			mustBePackageError(t, err)
			if !errors.Is(err, ErrZeroVariance) {
				return
			}
		}
		if math.IsNaN(m.Mean) || math.IsNaN(m.Std) || m.Std < 0 || math.IsNaN(m.Sharpe()) {
			t.Fatalf("%v: %+v, Sharpe %v", r, m, m.Sharpe())
		}
		// γ4 ≥ 1 + γ3² ≥ 1, to rounding (two-point samples sit on it).
		if err == nil && (math.IsNaN(m.Skew) || math.IsNaN(m.Kurt) || m.Kurt < 1-1e-12) {
			t.Fatalf("%v: %+v", r, m)
		}
		psr, err := m.PSR(0)
		if err != nil {
			mustBePackageError(t, err)
		} else if !(psr >= 0 && psr <= 1) {
			t.Fatalf("%v: PSR %v", r, psr)
		}
		for _, p := range []float64{0, 5, 50, 95, 100} {
			if v := Percentile(r, p); math.IsNaN(v) && len(r) > 0 && !anyNaN(r) {
				t.Fatalf("%v: percentile %v is NaN", r, p)
			}
		}
	})
}

func anyNaN(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) {
			return true
		}
	}
	return false
}

func FuzzReturnsAlign(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		eq := floats(data, 4096)
		r, err := Returns(eq)
		if err != nil {
			mustBePackageError(t, err)
		} else {
			if len(r) != max(0, len(eq)-1) {
				t.Fatalf("%d returns of %d points", len(r), len(eq))
			}
			if err := checkFinite("", "", r); err != nil {
				t.Fatalf("%v: returns %v", eq, r)
			}
		}
		// The same bytes as times (sorted or not) and the values as bars.
		times := make([]int64, len(eq))
		for i := range times {
			times[i] = int64(binary.LittleEndian.Uint64(data[8*i:]) >> 8)
		}
		out, err := Align(times, eq, times, 1)
		if err != nil {
			mustBePackageError(t, err)
			return
		}
		if len(out) != len(times) {
			t.Fatalf("%d values for %d bars", len(out), len(times))
		}
	})
}

// FuzzCSCV takes the shape from the first bytes and a matrix from the
// rest.
func FuzzCSCV(f *testing.F) {
	f.Add(uint8(3), uint8(4), fuzzBytes(0.01, -0.02, 0.03, 0, 0.005, 0.1, -0.1, 0.2, 0.3, 0, 0, 0, 1e300, -1e300, 5e-324, 2))
	f.Add(uint8(2), uint8(2), fuzzBytes(0, 0, 0, 0, 0, 0, 0, 0))
	f.Add(uint8(4), uint8(6), fuzzBytes(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, math.NaN()))
	f.Add(uint8(3), uint8(0), fuzzBytes(1, 2, 3))
	f.Fuzz(func(t *testing.T, runs, blocks uint8, data []byte) {
		r := floats(data, 4096)
		n := int(runs%8) + 1
		tt := len(r) / n
		c, err := NewCSCV(tt, int(blocks%24))
		if err != nil {
			mustBePackageError(t, err)
			return
		}
		for j := range n {
			if err := c.Add(r[j*tt : (j+1)*tt]); err != nil {
				mustBePackageError(t, err)
			}
		}
		res, err := c.Result(context.Background())
		if err != nil {
			mustBePackageError(t, err)
			return
		}
		if !(res.PBO >= 0 && res.PBO <= 1) || !(res.OOSLossProbability >= 0 && res.OOSLossProbability <= 1) ||
			len(res.Splits) != res.Combinations {
			t.Fatalf("%+v", res)
		}
		for _, s := range res.Splits {
			if s.Chosen < 0 || s.Chosen >= res.Runs || s.Rank < 1 || s.Rank > float64(res.Runs) ||
				!(s.Omega > 0 && s.Omega < 1) || math.IsNaN(s.Lambda) || math.IsInf(s.Lambda, 0) ||
				math.IsNaN(s.InSample) || math.IsNaN(s.OutOfSample) {
				t.Fatalf("split %+v of %d runs", s, res.Runs)
			}
		}
	})
}

func FuzzMonteCarlo(f *testing.F) {
	for m := range uint8(4) {
		f.Add(m, uint64(0), fuzzBytes(0.01, -0.02, 0.03, 0.0, 0.005))
		f.Add(m, uint64(7), fuzzBytes(1e300, -0.5, 1e300, 3, 1e-300, 1.7e308, -0.99, -1e308))
		f.Add(m, uint64(1), fuzzBytes(-1.5, 1, -1, 2, -3))
	}
	f.Fuzz(func(t *testing.T, method uint8, seed uint64, data []byte) {
		r := floats(data, 2048)
		opts := MonteCarloOptions{Method: Method(method % 4), Runs: 20, Seed: seed, FanPoints: 7}
		res, err := MonteCarlo(context.Background(), r, opts)
		if err != nil {
			mustBePackageError(t, err)
			return
		}
		if !(res.LossProbability >= 0 && res.LossProbability <= 1) || len(res.Fan.Steps) < 2 ||
			res.Fan.Steps[len(res.Fan.Steps)-1] != len(r) {
			t.Fatalf("%+v", res)
		}
		// Returns above −1 keep every path positive: nothing is NaN.
		positive := true
		for _, x := range r {
			positive = positive && x > -1
		}
		for _, p := range []Percentiles{res.TotalReturn, res.MaxDrawdown, res.Sharpe} {
			v := []float64{p.P5, p.P25, p.P50, p.P75, p.P95}
			for i := range v {
				if math.IsNaN(v[i]) {
					if positive {
						t.Fatalf("%v: NaN in %+v", r, p)
					}
					continue
				}
				if i > 0 && !math.IsNaN(v[i-1]) && v[i] < v[i-1] {
					t.Fatalf("%v: percentiles out of order %+v", r, p)
				}
			}
		}
		if positive && (res.MaxDrawdown.P95 > 1 || res.TotalReturn.P5 < -1) {
			t.Fatalf("%v: positive paths with %+v, %+v", r, res.MaxDrawdown, res.TotalReturn)
		}
	})
}

func FuzzNormal(f *testing.F) {
	for _, p := range []float64{0.5, 1e-300, 5e-324, 0.975, 1 - 1e-16, 0, 1, -1, math.NaN()} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p float64) {
		x := NormQuantile(p)
		if !(p >= 0 && p <= 1) {
			if !math.IsNaN(x) {
				t.Fatalf("Φ⁻¹(%v) = %v, want NaN", p, x)
			}
			return
		}
		if math.IsNaN(x) || (p > 0 && p < 1 && math.IsInf(x, 0)) {
			t.Fatalf("Φ⁻¹(%v) = %v", p, x)
		}
		c := NormCDF(x)
		if p >= 1e-300 && p <= 0.5 && math.Abs(c-p) > max(2e-15, 4e-16*x*x)*p {
			t.Fatalf("Φ(Φ⁻¹(%v)) = %v", p, c)
		}
		if p > 0.5 && p < 1 && math.Abs(c-p) > 4e-16*max(1, x*x) {
			t.Fatalf("Φ(Φ⁻¹(%v)) = %v", p, c)
		}
		if y := NormCDF(p); math.IsNaN(y) || y < 0 || y > 1 {
			t.Fatalf("Φ(%v) = %v", p, y)
		}
	})
}

func FuzzPSR(f *testing.F) {
	f.Add(0.1, 0.0, 100, 0.0, 3.0)
	f.Add(0.5, 0.0, 100, 5.0, 1.0)
	f.Add(math.Inf(1), 0.0, 2, 0.0, 3.0)
	f.Fuzz(func(t *testing.T, sr, star float64, n int, skew, kurt float64) {
		p, err := PSR(sr, star, n, skew, kurt)
		if err != nil {
			mustBePackageError(t, err)
			if !math.IsNaN(p) {
				t.Fatalf("PSR = %v with %v", p, err)
			}
			return
		}
		if !(p >= 0 && p <= 1) {
			t.Fatalf("PSR(%v, %v, %d, %v, %v) = %v", sr, star, n, skew, kurt, p)
		}
		if v, err := MinTRL(sr, star, skew, kurt, 0.95); err == nil && (math.IsNaN(v) || v < 1) {
			t.Fatalf("MinTRL = %v", v)
		}
	})
}
