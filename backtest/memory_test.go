package backtest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"stratbench/data"
)

// pqBar is a bar as the test writes it to Parquet.
type pqBar struct {
	Timestamp int64   `parquet:"timestamp,timestamp(nanosecond:utc)"`
	Symbol    string  `parquet:"symbol,dict"`
	Open      float64 `parquet:"open"`
	High      float64 `parquet:"high"`
	Low       float64 `parquet:"low"`
	Close     float64 `parquet:"close"`
	Volume    float64 `parquet:"volume"`
}

// writeParquetWalk writes n one-minute bars of two symbols, interleaved,
// as Parquet (snappy, row groups of 256Ki rows).
func writeParquetWalk(t testing.TB, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[pqBar](f, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(1<<18))
	rng := splitmix64(5)
	price := [2]float64{100, 40}
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC).UnixNano()
	batch := make([]pqBar, 0, 8192)
	for i := range n {
		s := i % 2
		open := price[s]
		price[s] = cents(price[s] * (1 + 0.001*rng.normal()))
		batch = append(batch, pqBar{Timestamp: start + int64(i/2)*60e9, Symbol: []string{"A", "B"}[s], Open: open,
			High: cents(max(open, price[s]) + 0.01), Low: cents(min(open, price[s]) - 0.01), Close: price[s], Volume: float64(100 + i%7)})
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := w.Write(batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// A replay of data that streams holds memory bounded by the streams and
// the lookahead, not by the number of bars: two million bars (104 MB
// decoded) replay through the driver in a heap of a few tens of MiB.
func TestStreamedReplayMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("two million bars")
	}
	const n = 2_000_000
	const budget = -1 // stream everything (decoded whole, the heap grows by 95 MiB and the test fails)
	path := filepath.Join(t.TempDir(), "bars.parquet")
	writeParquetWalk(t, path, n)
	// The heap in use counts garbage not yet collected too: with the
	// default GOGC it may reach twice what is live, and the sampled peak
	// then depends on when the collector ran (29-42 MiB over seven runs
	// of the same replay). Collecting at 10 % growth keeps the peak to
	// what the replay holds.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	set, err := data.Open(context.Background(), []string{path}, data.Options{Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	drv := mustDriver(t, set, DefaultOptions())
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				runtime.ReadMemStats(&m)
				peak = max(peak, m.HeapInuse)
			}
		}
	}()
	err = drv.Drive(context.Background(), noopWorker{}, discardRecords{})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if m := drv.Outcome().Metrics; m.Events != n {
		t.Fatalf("replayed %d events of %d", m.Events, n)
	}
	grew := int64(peak) - int64(base.HeapInuse)
	t.Logf("heap in use: %d MiB before, peak %d MiB while the data was opened and replayed (%d bars, %d MiB decoded)",
		base.HeapInuse>>20, peak>>20, n, n*52>>20)
	if grew > 40<<20 {
		t.Errorf("the replay's heap grew by %d MiB: more than the streams and the lookahead hold", grew>>20)
	}
}
