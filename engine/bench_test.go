package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"stratbench/contract"
	"stratbench/job"
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
		CacheDir: filepath.Join(home, "cache"), Limits: job.DefaultLimits(), Host: testHost, Version: "bench"}
	b.ResetTimer()
	j, err := Start(context.Background(), cfg, d)
	if err != nil {
		b.Fatal(err)
	}
	rep, err := j.Wait()
	if err != nil || rep.Status != job.StatusPassed {
		b.Fatalf("status %v failure %+v err %v", rep.Status, rep.Failure, err)
	}
	b.StopTimer()
	b.ReportMetric(rep.Hooks[contract.HookOnData].TotalMS*1e6/float64(b.N), "hook-ns/bar")
}

// BenchmarkBars measures the per-bar cost of the whole path (driver, frames,
// worker loop, statistics) with a strategy that does nothing.
func BenchmarkBars(b *testing.B) { benchmarkStrategy(b, "noop.py", 1<<16) }

// BenchmarkRoundTrip measures a round trip per bar: every bar places an order,
// so the worker yields and the driver sends the next batch (of 64 bars, the
// backtest driver's smallest) each time.
func BenchmarkRoundTrip(b *testing.B) { benchmarkStrategy(b, "order_every_bar.py", 64) }

// BenchmarkStartToFirstHook measures how long a job takes from Start to the
// first output of its first on_data call reaching the host: what a save
// costs before the workbench shows the new run working (the watcher's
// debounce comes on top).
func BenchmarkStartToFirstHook(b *testing.B) {
	py, err := FindPython(context.Background(), "")
	if err != nil {
		b.Skip(err)
	}
	home := b.TempDir()
	cfg := Config{Strategy: filepath.Join("..", "testdata", "strategies", "hello_first_bar.py"), Python: py, Home: home,
		CacheDir: filepath.Join(home, "cache"), Limits: job.DefaultLimits(), Host: testHost, Version: "bench"}
	var total time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		j, err := Start(context.Background(), cfg, newReplay(20160, 2))
		if err != nil {
			b.Fatal(err)
		}
		var first time.Duration
		for e := range j.Events() {
			if l, ok := e.(job.LogLines); ok && first == 0 {
				for _, line := range l.Lines {
					if line.Line == "first bar" {
						first = line.Time.Sub(start)
					}
				}
			}
		}
		if _, err := j.Wait(); err != nil || first == 0 {
			b.Fatalf("no first bar: %v", err)
		}
		total += first
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms-to-first-hook")
}
