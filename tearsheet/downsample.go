package tearsheet

import "math"

// displayBuckets is how many buckets a chart's series are cut into: each
// keeps at most its first, last, lowest and highest point of every series,
// so a chart has at most 4 × displayBuckets × series points.
const displayBuckets = 1000

// pick returns the indices of [0, n) that a chart draws of the series ys
// (all of length n): every index when there are few, else, in each of
// buckets equal stretches, the first and last index and, for every
// series, the index of its lowest and highest value (NaN skipped), in
// increasing order and without repeats. No drawdown or spike disappears.
func pick(n, buckets int, ys ...[]float64) []int {
	if n <= 4*buckets {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	out := make([]int, 0, buckets*(2+2*len(ys)))
	sel := make([]int, 0, 2+2*len(ys))
	for b := 0; b < buckets; b++ {
		lo, hi := b*n/buckets, (b+1)*n/buckets
		if lo >= hi {
			continue
		}
		sel = append(sel[:0], lo, hi-1)
		for _, y := range ys {
			iMin, iMax := -1, -1
			for i := lo; i < hi; i++ {
				v := y[i]
				if math.IsNaN(v) {
					continue
				}
				if iMin < 0 || v < y[iMin] {
					iMin = i
				}
				if iMax < 0 || v > y[iMax] {
					iMax = i
				}
			}
			if iMin >= 0 {
				sel = append(sel, iMin, iMax)
			}
		}
		// A handful of indices: insertion sort, then drop repeats.
		for i := 1; i < len(sel); i++ {
			for j := i; j > 0 && sel[j] < sel[j-1]; j-- {
				sel[j], sel[j-1] = sel[j-1], sel[j]
			}
		}
		for i, v := range sel {
			if i == 0 || v != sel[i-1] {
				out = append(out, v)
			}
		}
	}
	return out
}

// takeF returns v at the indices idx.
func takeF(v []float64, idx []int) []float64 {
	out := make([]float64, len(idx))
	for i, j := range idx {
		out[i] = v[j]
	}
	return out
}

// takeT returns the times t (unix ns) at idx, in seconds as charts take them.
func takeT(t []int64, idx []int) []float64 {
	out := make([]float64, len(idx))
	for i, j := range idx {
		out[i] = seconds(t[j])
	}
	return out
}

// seconds is a unix time in ns as seconds, to the millisecond.
func seconds(ns int64) float64 { return float64(ns/1e6) / 1e3 }
