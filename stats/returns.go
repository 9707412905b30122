package stats

import "math"

// Returns gives the per-period simple returns of an equity series, one
// fewer than its points:
//
//	r_t = (e_t − e_{t−1}) / |e_{t−1}|
//
// which is e_t/e_{t−1} − 1 while the equity is positive (the job report's
// metrics use the same rule, so the Sharpe ratio of these returns is the
// report's sharpe before annualising). A period that starts at an equity
// of exactly 0 has a return of 0: a run that is wiped out stays flat.
// Fewer than two points give no returns and no error; a NaN or an
// infinity is a NotFinite error naming its index.
func Returns(equity []float64) ([]float64, error) {
	if err := checkFinite("Returns", "equity", equity); err != nil {
		return nil, err
	}
	if len(equity) < 2 {
		return []float64{}, nil
	}
	r := make([]float64, len(equity)-1)
	for i := range r {
		prev := equity[i]
		if prev != 0 {
			r[i] = (equity[i+1] - prev) / math.Abs(prev)
		}
		if !finite(r[i]) { // a huge rise from a tiny equity
			return nil, errorf("Returns", "equity", NotFinite, i+1, "the return from %v to %v overflows", prev, equity[i+1])
		}
	}
	return r, nil
}

// Align samples an equity curve at the bar times: a run records its equity
// only at its own events, and the returns of different runs must line up
// on the same periods (the data's bar times, the union of the symbols'
// times) to be compared.
//
// The curve is the points (times[i], values[i]), times in non-decreasing
// order. The value at bar b is the value of the last point whose time is
// at or before b, carried forward over the bars with no point of their
// own; when several points share a time the last one counts. Bars before
// the first point take initial (the starting cash). Points after the last
// bar are ignored. bars must be in non-decreasing order too; the result
// has one value per bar.
//
// Times are whatever integer clock the caller uses (the data's Unix
// nanoseconds), the same for both. Slices of different lengths, times out
// of order, or a NaN or infinite value or initial are errors.
func Align(times []int64, values []float64, bars []int64, initial float64) ([]float64, error) {
	const op = "Align"
	if len(times) != len(values) {
		return nil, errorf(op, "values", BadArgument, -1, "%d values for %d times", len(values), len(times))
	}
	if !finite(initial) {
		return nil, errorf(op, "initial", NotFinite, -1, "%v", initial)
	}
	if err := checkFinite(op, "values", values); err != nil {
		return nil, err
	}
	for i := 1; i < len(times); i++ {
		if times[i] < times[i-1] {
			return nil, errorf(op, "times", BadArgument, i, "time %d before the previous %d", times[i], times[i-1])
		}
	}
	for i := 1; i < len(bars); i++ {
		if bars[i] < bars[i-1] {
			return nil, errorf(op, "bars", BadArgument, i, "bar %d before the previous %d", bars[i], bars[i-1])
		}
	}
	out := make([]float64, len(bars))
	cur, k := initial, 0
	for i, b := range bars {
		for k < len(times) && times[k] <= b {
			cur = values[k]
			k++
		}
		out[i] = cur
	}
	return out, nil
}
