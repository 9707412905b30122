package backtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"stratbench/contract"
	"stratbench/data"
)

// writeSymbolParquet writes n one-minute bars of one symbol; a bar at
// badRow (0-based, -1 for none) has a NaN close.
func writeSymbolParquet(t *testing.T, path, symbol string, n, badRow int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[pqBar](f)
	rows := make([]pqBar, n)
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC).UnixNano()
	for i := range rows {
		p := 100 + float64(i%50)
		rows[i] = pqBar{Timestamp: start + int64(i)*60e9, Symbol: symbol, Open: p, High: p + 1, Low: p - 1, Close: p, Volume: 10}
		if i == badRow {
			rows[i].Close = math.NaN()
		}
	}
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// A bad value in a folder of many Parquet files that streams is met when
// the first replay spills them (their streams would hold more than the
// stream budget, here 1 MiB for a dozen small files), before any bar is
// replayed: the job fails with kind data at event 0, naming the file, row
// and column.
func TestSpilledBadValueFailsAtStart(t *testing.T) {
	dir := t.TempDir()
	for i := range 12 {
		bad := -1
		if i == 7 {
			bad = 300
		}
		writeSymbolParquet(t, filepath.Join(dir, fmt.Sprintf("S%02d.parquet", i)), fmt.Sprintf("S%02d", i), 500, bad)
	}
	set, err := data.Open(context.Background(), []string{dir}, data.Options{Budget: -1, StreamBudget: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	drv := mustDriver(t, set, DefaultOptions())
	w := newScriptWorker(t, drv)
	err = drv.Drive(context.Background(), w, discardRecords{})
	var f *contract.Failure
	if !errors.As(err, &f) || f.Kind != contract.KindData || f.EventIndex == nil || *f.EventIndex != 0 ||
		!strings.Contains(f.Message, filepath.Join(dir, "S07.parquet")+` row 301 column "close": not a finite number: NaN`) {
		t.Fatalf("Drive = %v", err)
	}
	if len(w.events) != 0 {
		t.Errorf("on_data ran on %d bars before the data failed", len(w.events))
	}
}
