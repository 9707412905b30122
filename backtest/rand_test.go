package backtest

import "math"

// The tests' deterministic generator: the sample's (data/sample.go), so
// that the random walks the tests build stay what they were.

type splitmix64 uint64

func (s *splitmix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (s *splitmix64) uniform() float64 { return float64(s.next()>>11) * 0x1p-53 }

func (s *splitmix64) normal() float64 {
	sum := s.uniform() + s.uniform() + s.uniform() + s.uniform()
	return float64((sum - 2) * math.Sqrt(3))
}

// cents rounds a price to a whole cent, never below one cent.
func cents(p float64) float64 { return max(math.Round(p*100)/100, 0.01) }
