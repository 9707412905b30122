package workbench

import (
	"encoding/binary"
	"math"
	"testing"

	"stratbench/themes"
)

func TestDownsample(t *testing.T) {
	vals := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	got := downsample(vals, 4)
	want := []float64{2, 5, 7, 10} // the last value of each bucket
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("downsample = %v, want %v", got, want)
		}
	}
	if d := downsample(vals, 20); len(d) != 10 {
		t.Errorf("upsampled to %d points", len(d))
	}
	if downsample(vals, 0) != nil {
		t.Error("zero points gave values")
	}
}

// FuzzChart: whatever curve a stored job's file holds (the store parses
// it: job's FuzzParseEquityCSV) draws without panicking.
func FuzzChart(f *testing.F) {
	f.Add([]byte{})
	f.Add(binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN())))
	f.Add(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, math.Float64bits(1e308)), math.Float64bits(-1e308)))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var vals []float64
		for len(raw) >= 8 {
			vals = append(vals, math.Float64frombits(binary.LittleEndian.Uint64(raw)))
			raw = raw[8:]
		}
		chart(themes.Plain(), vals, 40, 6)
	})
}
