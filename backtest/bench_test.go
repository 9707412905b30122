package backtest

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"stratbench/contract"
	"stratbench/data"
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
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC).UnixNano()
	price := [2]float64{100, 40}
	buf := []byte("timestamp,symbol,open,high,low,close,volume\n")
	for i := 0; i < n; i++ {
		s := i % 2
		open := price[s]
		price[s] = cents(price[s] * (1 + 0.001*rng.NormFloat64()))
		hi, lo := cents(max(open, price[s])+0.01), cents(min(open, price[s])-0.01)
		buf = append(buf, formatTime(start+int64(i/2)*60e9)...)
		buf = append(buf, ",SYM"...)
		buf = strconv.AppendInt(buf, int64(s), 10)
		for _, v := range [...]float64{open, hi, lo, price[s]} {
			buf = append(buf, ',')
			buf = strconv.AppendFloat(buf, v, 'f', -1, 64)
		}
		buf = append(buf, ',')
		buf = strconv.AppendUint(buf, 100+rng.Uint64()%900, 10)
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

// BenchmarkLoadReplay1M opens a 1,000,000-bar CSV and replays it with a
// no-op strategy in-process, decoded once (resident, as a million bars fit
// the decode budget) and streamed from the file. Reported: ns/bar.
func BenchmarkLoadReplay1M(b *testing.B) {
	const n = 1_000_000
	path := writeBenchCSV(b, n)
	open := func(b *testing.B, budget int64) *data.Set {
		set, err := data.Open(context.Background(), []string{path}, data.Options{Budget: budget})
		if err != nil {
			b.Fatal(err)
		}
		return set
	}
	b.Run("load", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			open(b, 0).Close()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/bar")
	})
	for _, mode := range []struct {
		name   string
		budget int64
	}{{"replay", 0}, {"replay-streamed", -1}} {
		b.Run(mode.name, func(b *testing.B) {
			set := open(b, mode.budget)
			defer set.Close()
			b.ReportAllocs()
			for b.Loop() {
				drv, err := NewDriver(set, DefaultOptions())
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
	}
}

// BenchmarkReplayYieldEveryBar replays with a worker that places an order on
// every bar, the worst case for batching: one Run per bar.
func BenchmarkReplayYieldEveryBar(b *testing.B) {
	set := sample(b, data.Window{})
	n := int(set.Info().Events)
	b.ReportAllocs()
	for b.Loop() {
		drv, _ := NewDriver(set, DefaultOptions())
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
	set := sample(b, data.Window{})
	n := int(set.Info().Events)
	b.ReportAllocs()
	for b.Loop() {
		drv, _ := NewDriver(set, DefaultOptions())
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
