package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/backtest"
	"stratbench/contract"
	"stratbench/data"
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
	cpu0 := cpuTime()
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
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(j.batches)/float64(b.N), "trips/op")
	b.ReportMetric(rep.Hooks[contract.HookOnData].TotalMS*1e6/float64(b.N), "hook-ns/bar")
}

// BenchmarkBars measures the per-bar cost of the whole path (driver, frames,
// worker loop, statistics) with a strategy that does nothing.
func BenchmarkBars(b *testing.B) { benchmarkStrategy(b, "noop.py", 1<<16) }

// BenchmarkRoundTrip measures one order's way from the strategy's call to
// its fill, an order on every bar:
//   - replay: a test driver that takes every order in and sends the next
//     batch (of 64 bars, the backtest driver's smallest): one round trip
//     per order, worker → host → worker;
//   - market/host: the backtest driver's market, one symbol, a buy and a
//     sell in turn (testdata/strategies/flip_every_bar.py), every fill made
//     by the host at a round trip (Setup.LocalFills off, as before local
//     fills);
//   - market/local: the same, the worker delivering each fill itself, the
//     host checking it when the batch's yield comes (localfills.go).
//
// ns/op is the wall time per bar (each with an order), cpu-ns/op the CPU
// time of the benchmark's process and the worker's tree per bar, trips/op
// the batch requests (round trips) per bar.
func BenchmarkRoundTrip(b *testing.B) {
	b.Run("replay", func(b *testing.B) { benchmarkStrategy(b, "order_every_bar.py", 64) })
	b.Run("market/host", func(b *testing.B) { benchmarkMarket(b, "flip_every_bar.py", false) })
	b.Run("market/local", func(b *testing.B) { benchmarkMarket(b, "flip_every_bar.py", true) })
}

// benchmarkMarket runs one job of strategy over b.N bars of one symbol
// through the backtest driver, its worker delivering fills itself when
// local.
func benchmarkMarket(b *testing.B, strategy string, local bool) {
	py, err := FindPython(context.Background(), "")
	if err != nil {
		b.Skip(err)
	}
	set, err := data.Open(context.Background(), []string{oneSymbolBars(b, b.N)}, data.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer set.Close()
	d, err := backtest.NewDriver(set, backtest.DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	var drv contract.Driver = d
	if !local {
		drv = hostFills{d}
	}
	home := b.TempDir()
	cfg := Config{Strategy: filepath.Join("..", "testdata", "strategies", strategy), Python: py, Home: home,
		CacheDir: filepath.Join(home, "cache"), Limits: job.DefaultLimits(), Host: testHost, Version: "bench"}
	cpu0 := cpuTime()
	b.ResetTimer()
	jb, err := Start(context.Background(), cfg, drv)
	if err != nil {
		b.Fatal(err)
	}
	rep, err := jb.Wait()
	if err != nil || rep.Status != job.StatusPassed || rep.Metrics.Fills != b.N-1 {
		b.Fatalf("status %v failure %+v err %v fills %d", rep.Status, rep.Failure, err, rep.Metrics.Fills)
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(jb.batches)/float64(b.N), "trips/op")
	b.ReportMetric(rep.Hooks[contract.HookOnData].TotalMS*1e6/float64(b.N), "hook-ns/bar")
}

// cpuTime is the CPU time of this process and of its children it waited
// for (a job's worker tree, once the job ended), in nanoseconds.
func cpuTime() time.Duration {
	var self, children unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &self)
	unix.Getrusage(unix.RUSAGE_CHILDREN, &children)
	ns := func(r *unix.Rusage) int64 { return r.Utime.Nano() + r.Stime.Nano() }
	return time.Duration(ns(&self) + ns(&children))
}

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
