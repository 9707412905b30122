package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/backtest"
	"stratbench/contract"
	"stratbench/data"
	"stratbench/job"
)

// benchmarkStrategy runs one job over b.N bars of the test driver, in
// batches of batch bars, and reports the cost per bar (perBar).
func benchmarkStrategy(b *testing.B, name string, batch int) {
	perBar(b, name, func(n int) contract.Driver {
		d := newReplay(n, 1)
		d.batch = batch
		return d
	})
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
// See perBar for what is reported.
func BenchmarkRoundTrip(b *testing.B) {
	b.Run("replay", func(b *testing.B) { benchmarkStrategy(b, "order_every_bar.py", 64) })
	b.Run("market/host", func(b *testing.B) { benchmarkMarket(b, "flip_every_bar.py", false) })
	b.Run("market/local", func(b *testing.B) { benchmarkMarket(b, "flip_every_bar.py", true) })
}

// benchmarkMarket runs strategy over b.N bars of one symbol through the
// backtest driver, its worker delivering fills itself when local.
func benchmarkMarket(b *testing.B, strategy string, local bool) {
	perBar(b, strategy, func(n int) contract.Driver {
		set, err := data.Open(context.Background(), []string{oneSymbolBars(b, n)}, data.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { set.Close() })
		d, err := backtest.NewDriver(set, backtest.DefaultOptions())
		if err != nil {
			b.Fatal(err)
		}
		if !local {
			return hostFills{d}
		}
		return d
	})
}

// perBar runs strategy in a job of b.N bars, driven by a driver of so
// many bars from driver, and reports what the bars cost from the first
// batch request to the end of the replay, per bar: the job's start and its
// end (on_finish, the report) are left out. ns/op is the whole job,
// start included; ns/bar the wall time per bar, host-cpu-ns/bar the CPU
// time of this process per bar, worker-cpu-ns/bar the worker's
// (/proc/PID/schedstat); trips/bar the batch requests (round trips to the
// worker) per bar; hook-ns/bar the hook's own time per bar, as the worker
// says.
func perBar(b *testing.B, strategy string, driver func(n int) contract.Driver) {
	py, err := FindPython(context.Background(), "")
	if err != nil {
		b.Skip(err)
	}
	home := b.TempDir()
	cfg := Config{Strategy: filepath.Join("..", "testdata", "strategies", strategy), Python: py, Home: home,
		CacheDir: filepath.Join(home, "cache"), Limits: job.DefaultLimits(), Host: testHost, Version: "bench"}
	d := &stamped{Driver: driver(b.N)}
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
	if d.err != nil {
		b.Fatal(d.err)
	}
	c, n := d.end.minus(d.first), float64(b.N)
	b.ReportMetric(float64(c.wall)/n, "ns/bar")
	b.ReportMetric(float64(c.host)/n, "host-cpu-ns/bar")
	b.ReportMetric(float64(c.worker)/n, "worker-cpu-ns/bar")
	b.ReportMetric(float64(j.batches)/n, "trips/bar")
	b.ReportMetric(rep.Hooks[contract.HookOnData].TotalMS*1e6/n, "hook-ns/bar")
}

// stamped is a driver that notes the cost so far (costOf) at its worker's
// first batch and when its replay ends.
type stamped struct {
	contract.Driver
	first, end cost
	started    bool
	err        error
}

func (d *stamped) Drive(ctx context.Context, w contract.Worker, rec contract.Records) error {
	err := d.Driver.Drive(ctx, stampedWorker{w, d}, rec)
	if d.started && d.err == nil {
		d.end, d.err = costOf(w)
	}
	return err
}

type stampedWorker struct {
	contract.Worker
	d *stamped
}

func (w stampedWorker) Run(ctx context.Context, b *contract.Batch) (contract.Yield, error) {
	if !w.d.started {
		w.d.started = true
		w.d.first, w.d.err = costOf(w.Worker)
	}
	return w.Worker.Run(ctx, b)
}

// cost is a moment's wall clock, the CPU time of this process, and the
// time the worker's program ran on a CPU.
type cost struct{ wall, host, worker time.Duration }

func costOf(w contract.Worker) (cost, error) {
	var self unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &self); err != nil {
		return cost{}, err
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", w.(*worker).proc.PID()))
	if err != nil {
		return cost{}, err
	}
	var ran int64
	if _, err := fmt.Sscan(string(stat), &ran); err != nil {
		return cost{}, fmt.Errorf("schedstat %q: %w", stat, err)
	}
	return cost{wall: time.Duration(time.Now().UnixNano()), host: time.Duration(self.Utime.Nano() + self.Stime.Nano()),
		worker: time.Duration(ran)}, nil
}

func (c cost) minus(o cost) cost { return cost{c.wall - o.wall, c.host - o.host, c.worker - o.worker} }

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
