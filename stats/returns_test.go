package stats

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestReturns(t *testing.T) {
	got, err := Returns([]float64{100, 110, 99, 0, 50, -50, -25})
	// 0 → 50 is a period that starts at 0: return 0. −50 → −25 rises by
	// half the magnitude.
	want := []float64{0.1, -0.1, -1, 0, -2, 0.5}
	if err != nil || len(got) != len(want) {
		t.Fatalf("Returns = %v, %v", got, err)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-15 {
			t.Errorf("return %d = %v, want %v", i, got[i], want[i])
		}
	}
	for _, short := range [][]float64{nil, {100}} {
		if got, err := Returns(short); err != nil || got == nil || len(got) != 0 {
			t.Errorf("Returns(%v) = %#v, %v, want no returns", short, got, err)
		}
	}
	var e *Error
	if _, err := Returns([]float64{1, 2, math.NaN()}); !errors.As(err, &e) || e.Kind != NotFinite || e.Index != 2 {
		t.Errorf("a NaN: %v", err)
	}
	if _, err := Returns([]float64{1, 1e-300, 1e300}); !errors.As(err, &e) || e.Kind != NotFinite || e.Index != 2 {
		t.Errorf("a return of 1e600: %v", err)
	}
}

func TestAlign(t *testing.T) {
	// Two points at time 20: the last counts. Bar 5 is before the first
	// point; bar 30 has none of its own; the point at 60 is after the last
	// bar.
	got, err := Align([]int64{10, 20, 20, 40, 60}, []float64{1, 2, 3, 4, 5}, []int64{5, 10, 15, 20, 30, 40, 50}, 0.5)
	if want := []float64{0.5, 1, 1, 3, 3, 4, 4}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Align = %v, %v, want %v", got, err, want)
	}
	if got, err := Align(nil, nil, []int64{1, 2}, 7); err != nil || !slices.Equal(got, []float64{7, 7}) {
		t.Errorf("no points: %v, %v", got, err)
	}
	for _, c := range []struct {
		times  []int64
		values []float64
		bars   []int64
		init   float64
		kind   Kind
		arg    string
		index  int
	}{
		{[]int64{1, 2}, []float64{1}, nil, 0, BadArgument, "values", -1},
		{[]int64{1, 3, 2}, []float64{1, 2, 3}, nil, 0, BadArgument, "times", 2},
		{[]int64{1}, []float64{1}, []int64{5, 4}, 0, BadArgument, "bars", 1},
		{[]int64{1}, []float64{math.Inf(1)}, nil, 0, NotFinite, "values", 0},
		{nil, nil, nil, math.NaN(), NotFinite, "initial", -1},
	} {
		_, err := Align(c.times, c.values, c.bars, c.init)
		var e *Error
		if !errors.As(err, &e) || e.Kind != c.kind || e.Arg != c.arg || e.Index != c.index {
			t.Errorf("Align(%v, %v, %v, %v) = %v, want a %v error on %s[%d]", c.times, c.values, c.bars, c.init, err, c.kind, c.arg, c.index)
		}
	}
}

func TestMoments(t *testing.T) {
	// By hand: mean 4, deviations −3 −2 −1 0 6, Σd² = 50, Σd³ = 180,
	// Σd⁴ = 1394.
	m, err := ComputeMoments([]float64{1, 2, 3, 4, 10})
	if err != nil {
		t.Fatal(err)
	}
	want := Moments{T: 5, Mean: 4, Std: math.Sqrt(50.0 / 4), Skew: 36 / math.Pow(10, 1.5), Kurt: 278.8 / 100}
	if m.T != want.T || math.Abs(m.Mean-want.Mean) > 1e-15 || math.Abs(m.Std-want.Std) > 1e-15 ||
		math.Abs(m.Skew-want.Skew) > 1e-15 || math.Abs(m.Kurt-want.Kurt) > 1e-15 {
		t.Errorf("ComputeMoments = %+v, want %+v", m, want)
	}
	if math.Abs(m.Sharpe()-4/want.Std) > 1e-15 {
		t.Errorf("Sharpe = %v", m.Sharpe())
	}

	// Scale does not change skewness or kurtosis, nor overflow them.
	big, err := ComputeMoments([]float64{1e300, 2e300, 3e300, 4e300, 1e301})
	if err != nil || math.Abs(big.Skew-want.Skew) > 1e-14 || math.Abs(big.Kurt-want.Kurt) > 1e-14 || math.Abs(big.Sharpe()-m.Sharpe()) > 1e-14 {
		t.Errorf("×1e300: %+v, %v", big, err)
	}
	if wide, err := ComputeMoments([]float64{math.MaxFloat64, -math.MaxFloat64, -math.MaxFloat64}); err != nil ||
		math.IsNaN(wide.Skew) || math.IsNaN(wide.Kurt) || math.IsNaN(wide.Sharpe()) || math.IsNaN(wide.Mean) {
		t.Errorf("±MaxFloat64: %+v, %v", wide, err)
	}

	for _, c := range []struct {
		r      []float64
		sharpe float64
	}{{[]float64{0, 0, 0}, 0}, {[]float64{0.01, 0.01}, math.Inf(1)}, {[]float64{-1, -1}, math.Inf(-1)}} {
		m, err := ComputeMoments(c.r)
		if !errors.Is(err, ErrZeroVariance) || m.T != len(c.r) || m.Mean != c.r[0] || m.Std != 0 || m.Sharpe() != c.sharpe || !math.IsNaN(m.Skew) {
			t.Errorf("ComputeMoments(%v) = %+v, %v; Sharpe %v, want %v", c.r, m, err, m.Sharpe(), c.sharpe)
		}
		if _, err := m.PSR(0); !errors.Is(err, ErrZeroVariance) {
			t.Errorf("PSR of %v: %v", c.r, err)
		}
	}
	if _, err := ComputeMoments([]float64{1}); !errors.Is(err, ErrTooFew) {
		t.Errorf("one return: %v", err)
	}
	var e *Error
	if _, err := ComputeMoments([]float64{1, math.NaN()}); !errors.As(err, &e) || e.Index != 1 || e.Op != "ComputeMoments" {
		t.Errorf("a NaN: %v", err)
	}
	if got := e.Error(); got != "stats: ComputeMoments: returns[1]: not finite: NaN" {
		t.Errorf("message %q", got)
	}
}

func TestPercentile(t *testing.T) {
	xs := []float64{4, math.NaN(), 1, 3, 2}
	for _, c := range []struct{ p, want float64 }{{0, 1}, {25, 1.75}, {50, 2.5}, {100, 4}, {95, 3.85}} {
		if got := Percentile(xs, c.p); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("Percentile(%v, %v) = %v, want %v", xs, c.p, got, c.want)
		}
	}
	if xs[0] != 4 {
		t.Errorf("Percentile sorted its input: %v", xs)
	}
	for _, c := range []struct {
		xs []float64
		p  float64
	}{{nil, 50}, {[]float64{math.NaN()}, 50}, {xs, -1}, {xs, 101}, {xs, math.NaN()}} {
		if got := Percentile(c.xs, c.p); !math.IsNaN(got) {
			t.Errorf("Percentile(%v, %v) = %v, want NaN", c.xs, c.p, got)
		}
	}
	inf := []float64{1, math.Inf(1), math.Inf(1)}
	if got := Percentile(inf, 25); got != math.Inf(1) {
		t.Errorf("Percentile(%v, 25) = %v, want +Inf", inf, got)
	}
}
