package stats

import (
	"context"
	"math/rand/v2"
	"testing"
)

// BenchmarkCSCV is the robustness block's PBO on a sweep of 1,000 runs of
// 20,000 periods (the 160 MB matrix is never held: each run's returns are
// drawn into one buffer, outside the timer, and Add keeps 2·16 sums a
// run), then the 12,870 combinations.
func BenchmarkCSCV(b *testing.B) {
	const periods, runs = 20_000, 1000
	col := make([]float64, periods)
	b.ReportAllocs()
	for b.Loop() {
		g := rand.New(rand.NewPCG(1, 1))
		c, err := NewCSCV(periods, 0)
		if err != nil {
			b.Fatal(err)
		}
		for range runs {
			b.StopTimer()
			for i := range col {
				col[i] = 0.01 * g.NormFloat64()
			}
			b.StartTimer()
			if err := c.Add(col); err != nil {
				b.Fatal(err)
			}
		}
		res, err := c.Result(context.Background())
		if err != nil || res.Combinations != 12870 {
			b.Fatal(err, res.Combinations)
		}
	}
}

// BenchmarkMonteCarlo is the montecarlo command's default: 1,000 runs, here
// of the stationary bootstrap over 20,000 period returns.
func BenchmarkMonteCarlo(b *testing.B) {
	rs := testColumns(1, 20_000, 1)[0]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MonteCarlo(context.Background(), rs, MonteCarloOptions{Method: MethodBlocks}); err != nil {
			b.Fatal(err)
		}
	}
}
