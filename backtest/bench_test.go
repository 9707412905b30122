package backtest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"stratbench/contract"
)

// noopWorker acknowledges every batch at once: the simulator's own cost.
type noopWorker struct{}

func (noopWorker) Manifest() contract.Manifest { return contract.Manifest{} }
func (noopWorker) Run(ctx context.Context, b *contract.Batch) (contract.Yield, error) {
	return contract.Yield{Executions: len(b.Executions), Bars: b.Bars.Len()}, nil
}

// writeBenchCSV writes n one-minute bars of two symbols, interleaved.
func writeBenchCSV(b *testing.B, n int) string {
	path := filepath.Join(b.TempDir(), "bars.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	rng := splitmix64(1)
	price := [2]float64{100, 40}
	buf := []byte(header)
	for i := 0; i < n; i++ {
		s := i % 2
		open := price[s]
		price[s] = cents(price[s] * (1 + 0.001*rng.normal()))
		hi, lo := cents(max(open, price[s])+0.01), cents(min(open, price[s])-0.01)
		buf = time2026(buf, i/2)
		buf = append(buf, ",SYM"...)
		buf = strconv.AppendInt(buf, int64(s), 10)
		for _, v := range [...]float64{open, hi, lo, price[s]} {
			buf = append(buf, ',')
			buf = strconv.AppendFloat(buf, v, 'f', -1, 64)
		}
		buf = append(buf, ',')
		buf = strconv.AppendUint(buf, 100+rng.next()%900, 10)
		buf = append(buf, '\n')
		if len(buf) > 1<<20 {
			f.Write(buf)
			buf = buf[:0]
		}
	}
	f.Write(buf)
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// time2026 appends the RFC 3339 time of minute m after 2026-01-01.
func time2026(buf []byte, m int) []byte {
	return append(buf, formatTime(sampleStart.UnixNano()+int64(m)*60e9)...)
}

// BenchmarkLoadReplay1M loads a 1,000,000-bar CSV and replays it with a
// no-op strategy in-process. Reported: ns/bar for load and replay, and the
// heap held by the loaded data.
func BenchmarkLoadReplay1M(b *testing.B) {
	const n = 1_000_000
	path := writeBenchCSV(b, n)
	b.Run("load", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Load(path); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/bar")
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		d, _ := Load(path)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB-held")
		runtime.KeepAlive(d)
	})
	data, err := Load(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("replay", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			drv, err := NewDriver(data, Window{}, DefaultOptions())
			if err != nil {
				b.Fatal(err)
			}
			if err := drv.Drive(context.Background(), noopWorker{}, discardRecords{}); err != nil {
				b.Fatal(err)
			}
			drv.Outcome()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/bar")
	})
	b.Run("cached", func(b *testing.B) {
		c := NewCache(1 << 30)
		if _, err := c.Load(path); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Load(path); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReplayYieldEveryBar replays with a worker that places an order on
// every bar, the worst case for batching: one Run per bar.
func BenchmarkReplayYieldEveryBar(b *testing.B) {
	data := Sample()
	n := data.Bars().Len()
	b.ReportAllocs()
	for b.Loop() {
		drv, _ := NewDriver(data, Window{}, DefaultOptions())
		w := &everyBarWorker{}
		if err := drv.Drive(context.Background(), w, discardRecords{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/bar")
}

// everyBarWorker places a far limit order and cancels the previous one on
// every bar.
type everyBarWorker struct{ id int64 }

func (w *everyBarWorker) Manifest() contract.Manifest { return contract.Manifest{} }
func (w *everyBarWorker) Run(ctx context.Context, b *contract.Batch) (contract.Yield, error) {
	y := contract.Yield{Executions: len(b.Executions)}
	if b.Bars.Len() == 0 {
		return y, nil
	}
	y.Bars = 1
	limit := 1.0
	w.id++
	y.Commands = []contract.Command{{Op: contract.OpBuy, OrderID: w.id, Symbol: "SYNA", Qty: 1, Limit: &limit}}
	if w.id > 1 {
		y.Commands = append(y.Commands, contract.Command{Op: contract.OpCancel, OrderID: w.id - 1})
	}
	return y, nil
}

// BenchmarkRestingLimits: a strategy that leaves one far limit order open on
// every bar, never cancelled. Bars that cannot reach any of them must cost
// nothing per open order (it once cost O(open orders) per bar: quadratic).
func BenchmarkRestingLimits(b *testing.B) {
	data := Sample()
	n := data.Bars().Len()
	b.ReportAllocs()
	for b.Loop() {
		drv, _ := NewDriver(data, Window{}, DefaultOptions())
		if err := drv.Drive(context.Background(), &restingWorker{}, discardRecords{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/bar")
}

// restingWorker places a buy limit far below the market on every bar.
type restingWorker struct{ id int64 }

func (w *restingWorker) Manifest() contract.Manifest { return contract.Manifest{} }
func (w *restingWorker) Run(ctx context.Context, b *contract.Batch) (contract.Yield, error) {
	y := contract.Yield{Executions: len(b.Executions)}
	if b.Bars.Len() == 0 {
		return y, nil
	}
	y.Bars = 1
	limit := 0.01
	w.id++
	y.Commands = []contract.Command{{Op: contract.OpBuy, OrderID: w.id, Symbol: "SYNA", Qty: 1, Limit: &limit, Hook: contract.HookOnData}}
	return y, nil
}
