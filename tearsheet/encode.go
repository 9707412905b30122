package tearsheet

import (
	"math"
	"strconv"
)

// nums is a chart's values: JSON numbers to 7 significant digits (what a
// chart can show), NaN and infinities as null.
type nums []float64

func (v nums) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+len(v)*10)
	b = append(b, '[')
	for i, f := range v {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			b = append(b, "null"...)
			continue
		}
		b = strconv.AppendFloat(b, f, 'g', 7, 64)
	}
	return append(b, ']'), nil
}

// secs are times in seconds: JSON numbers to the millisecond.
type secs []float64

func (v secs) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+len(v)*15)
	b = append(b, '[')
	for i, f := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	return append(b, ']'), nil
}

// jsonNum is a number that JSON can carry exactly, null when it is not
// finite.
type jsonNum float64

func (f jsonNum) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(f), 'g', -1, 64), nil
}
