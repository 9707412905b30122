package job

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// recordJob makes a job folder with files in its artifacts folder (or its
// records folder, sub).
func recordJob(t testing.TB, sub string, files map[string]string) (*Store, string) {
	t.Helper()
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const id = "20261201-120000.000-e001"
	dir := filepath.Join(store.JobDir(id), sub)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return store, id
}

func ns(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UnixNano()
}

// TestEquityPoints: every event's time and equity, in order, from the
// record as the backtest writes it (a quoted symbol too), in artifacts/
// or records/; the errors name the file and the line.
func TestEquityPoints(t *testing.T) {
	const record = "event,time,equity,cash,symbol,close\n" +
		"0,2026-01-05T00:00:00Z,10000,10000,AAA,1\n" +
		"1,2026-01-05T00:00:00Z,10001.5,10000,\"B,B\",2\n" +
		"2,2026-01-05T00:01:00.5Z,9999.25,5000,AAA,1.5\n"
	want := []struct {
		t int64
		v float64
	}{{ns("2026-01-05T00:00:00Z"), 10000}, {ns("2026-01-05T00:00:00Z"), 10001.5}, {ns("2026-01-05T00:01:00.5Z"), 9999.25}}
	for _, sub := range []string{"artifacts", "records"} {
		store, id := recordJob(t, sub, map[string]string{"equity.csv": record})
		var got []struct {
			t int64
			v float64
		}
		err := store.EquityPoints(context.Background(), id, func(t int64, v float64) error {
			got = append(got, struct {
				t int64
				v float64
			}{t, v})
			return nil
		})
		if err != nil || len(got) != len(want) {
			t.Fatalf("%s: %v, %v", sub, got, err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: point %d %v, want %v", sub, i, got[i], want[i])
			}
		}
	}
	for _, tc := range []struct{ name, text, err string }{
		{"cut at its cap", "time,equity\n2026-01-05T00:00:00Z,1\n# equity.csv cut at its cap\n", ErrRecordCut.Error()},
		{"bad time", "time,equity\nyesterday,1\n", "equity.csv: line 2 field time"},
		{"bad equity", "time,equity\n2026-01-05T00:00:00Z,x\n", "equity.csv: line 2 field equity"},
		{"short line", "time,equity,cash\n2026-01-05T00:00:00Z\n", "equity.csv: line 2: 1 fields"},
		{"no column", "time,cash\n", "has no equity column"},
		{"empty", "", "empty file"},
		{"a line too long", "time,equity\n" + strings.Repeat("1", maxRecordLine+1) + "\n", "too long"},
	} {
		store, id := recordJob(t, "artifacts", map[string]string{"equity.csv": tc.text})
		err := store.EquityPoints(context.Background(), id, func(int64, float64) error { return nil })
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
	// No record; a link in its place is not followed.
	store, id := recordJob(t, "artifacts", nil)
	if err := store.EquityPoints(context.Background(), id, nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no record: %v", err)
	}
	target := filepath.Join(t.TempDir(), "elsewhere.csv")
	os.WriteFile(target, []byte("time,equity\n2026-01-05T00:00:00Z,1\n"), 0o644)
	os.Symlink(target, filepath.Join(store.JobDir(id), "artifacts", "equity.csv"))
	if err := store.EquityPoints(context.Background(), id, func(int64, float64) error { return nil }); err == nil {
		t.Error("a link was followed")
	}
	// fn's error ends the reading.
	store, id = recordJob(t, "artifacts", map[string]string{"equity.csv": record})
	stop := errors.New("enough")
	n := 0
	if err := store.EquityPoints(context.Background(), id, func(int64, float64) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("fn's error: %v after %d points", err, n)
	}
}

// TestTradePnLs: each closed trade's exit time and net P&L, in order.
func TestTradePnLs(t *testing.T) {
	store, id := recordJob(t, "artifacts", map[string]string{"trades.csv": "symbol,side,qty,entry_time,entry_price,exit_time,exit_price,entry_event,exit_event,fees,gross_pnl,net_pnl,return\n" +
		"AAA,long,10,2026-01-05T00:00:00Z,1,2026-01-05T00:05:00Z,2,0,5,0.5,10,9.5,0.95\n" +
		"AAA,short,10,2026-01-05T00:06:00Z,2,2026-01-05T00:07:00Z,3,6,7,0.5,-10,-10.5,-0.5\n"})
	var pnl []float64
	var exits []int64
	err := store.TradePnLs(context.Background(), id, func(exit int64, v float64) error {
		exits, pnl = append(exits, exit), append(pnl, v)
		return nil
	})
	if err != nil || len(pnl) != 2 || pnl[0] != 9.5 || pnl[1] != -10.5 || exits[1] != ns("2026-01-05T00:07:00Z") {
		t.Fatalf("%v %v %v", exits, pnl, err)
	}
}

// FuzzEquityPoints: any record, however made, gives points or an error,
// never a panic, and never more points than lines.
func FuzzEquityPoints(f *testing.F) {
	f.Add("event,time,equity,cash,symbol,close\n0,2026-01-05T00:00:00Z,10000,10000,AAA,1\n")
	f.Add("time,equity\n\"2026-01-05T00:00:00Z\",\"1\"\"\"\n#\n")
	f.Add("\ufefftime,equity\r\n2026-01-05 00:00:00,1e308\r\n")
	f.Fuzz(func(t *testing.T, text string) {
		n := 0
		scanRecord(context.Background(), strings.NewReader(text), []string{"time", "equity"}, func(line int, fields [][]byte) error {
			n++
			if len(fields) != 2 || line < 2 {
				t.Fatalf("line %d: %d fields", line, len(fields))
			}
			return nil
		})
		if n > strings.Count(text, "\n")+1 {
			t.Fatalf("%d rows of %d lines", n, strings.Count(text, "\n")+1)
		}
	})
}

// TestOrders: each line of the orders record, as the backtest writes it:
// orders, cancels (their fields empty) and executions.
func TestOrders(t *testing.T) {
	store, id := recordJob(t, "artifacts", map[string]string{"orders.csv": "record,time,event,order_id,symbol,side,qty,limit,price,fee,status,reason,cash,position,hook\n" +
		"order,2026-01-05T00:00:00Z,0,1,AAA,buy,10,,,,,,,,on_data\n" +
		"order,2026-01-05T00:00:00Z,0,2,AAA,sell,5,101.5,,,,,,,on_data\n" +
		"execution,2026-01-05T00:01:00Z,1,1,AAA,buy,10,,100,0,filled,,9000,10,\n" +
		"cancel,2026-01-05T00:01:00Z,1,2,,,,,,,,,,,on_execution\n"})
	var got []OrderRecord
	if err := store.Orders(context.Background(), id, func(o OrderRecord) error { got = append(got, o); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[1].Limit != "101.5" || got[1].Qty != "5" || got[2].Record != "execution" || got[2].Position != 10 ||
		got[2].Status != "filled" || got[3].Record != "cancel" || got[3].OrderID != 2 || got[3].Hook != "on_execution" || got[3].Event != 1 {
		t.Fatalf("%+v", got)
	}
	store, id = recordJob(t, "artifacts", map[string]string{"orders.csv": "record,time,event,order_id,symbol,side,qty,limit,price,fee,status,reason,cash,position,hook\n" +
		"order,2026-01-05T00:00:00Z,-1,1,AAA,buy,10,,,,,,,,on_data\n"})
	if err := store.Orders(context.Background(), id, func(OrderRecord) error { return nil }); err == nil || !strings.Contains(err.Error(), "field event") {
		t.Fatalf("a negative event: %v", err)
	}
}
