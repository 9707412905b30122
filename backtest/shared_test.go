package backtest

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"stratbench/contract"
	"stratbench/data"
)

// One set serves many drivers at once (a sweep's runs): each replays
// through a stream of its own, and each run equals the run alone, whether
// the set is decoded once and shared or streamed from the files by each.
func TestDriversShareASet(t *testing.T) {
	path := writeWalk(t, t.TempDir(), 7, []string{"B", "A", "C"}, 3000)
	run := func(set *data.Set, fast int) contract.Outcome {
		drv := mustDriver(t, set, Options{Cash: 100_000, FeeBps: 1})
		drv.maxBars = 500 // many batches, each a Fill of the stream
		w := newScriptWorker(t, drv)
		s := &smaCross{fast: fast, slow: 30, sizing: 0.3, closes: map[string][]float64{}}
		w.onData = s.onData
		if err := drv.Drive(context.Background(), w, discardRecords{}); err != nil {
			t.Error(err)
		}
		return drv.Outcome()
	}
	for _, budget := range []int64{0, -1} {
		set, err := data.Open(context.Background(), []string{path}, data.Options{Budget: budget})
		if err != nil {
			t.Fatal(err)
		}
		defer set.Close()
		if set.Info().Resident != (budget == 0) {
			t.Fatalf("budget %d: resident %v", budget, set.Info().Resident)
		}
		alone := map[int]contract.Outcome{}
		for _, fast := range []int{5, 10} {
			alone[fast] = run(set, fast)
		}
		if alone[5].Metrics.Fills == 0 || alone[5].OrdersHash == alone[10].OrdersHash {
			t.Fatalf("budget %d: runs that do not tell anything apart: %+v", budget, alone[5].Metrics)
		}
		var wg sync.WaitGroup
		got := make([]contract.Outcome, 6)
		for i := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i] = run(set, []int{5, 10}[i%2])
			}()
		}
		wg.Wait()
		for i, out := range got {
			want := alone[[]int{5, 10}[i%2]]
			if out.OrdersHash != want.OrdersHash || !reflect.DeepEqual(out.Metrics, want.Metrics) || out.DataHash != want.DataHash {
				t.Errorf("budget %d: concurrent run %d differs from the run alone:\n%+v\n%+v", budget, i, out.Metrics, want.Metrics)
			}
		}
	}
}
