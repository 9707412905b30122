package engine

import (
	"context"
	"path/filepath"
	"testing"
)

// benchmarkStrategy runs one job over b.N bars and reports the cost per bar.
func benchmarkStrategy(b *testing.B, name string, batch int) {
	py, err := FindPython(context.Background(), "")
	if err != nil {
		b.Skip(err)
	}
	home := b.TempDir()
	d := newReplay(b.N, 1)
	d.batch = batch
	cfg := Config{Strategy: filepath.Join("..", "testdata", "strategies", name), Python: py, Home: home,
		CacheDir: filepath.Join(home, "cache"), Limits: DefaultLimits(), Host: testHost, Version: "bench"}
	b.ResetTimer()
	job, err := Start(context.Background(), cfg, d)
	if err != nil {
		b.Fatal(err)
	}
	rep, err := job.Wait()
	if err != nil || rep.Status != StatusPassed {
		b.Fatalf("status %v failure %+v err %v", rep.Status, rep.Failure, err)
	}
	b.StopTimer()
	b.ReportMetric(rep.Hooks[HookOnData].TotalMS*1e6/float64(b.N), "hook-ns/bar")
}

// BenchmarkBars measures the per-bar cost of the whole path (driver, frames,
// worker loop, statistics) with a strategy that does nothing.
func BenchmarkBars(b *testing.B) { benchmarkStrategy(b, "noop.py", 1<<16) }

// BenchmarkRoundTrip measures a round trip per bar: every bar places an order,
// so the worker yields and the driver sends the next batch (of 64 bars, the
// backtest driver's smallest) each time.
func BenchmarkRoundTrip(b *testing.B) { benchmarkStrategy(b, "order_every_bar.py", 64) }
