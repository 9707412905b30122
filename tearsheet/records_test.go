package tearsheet

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

const equityCSV = `event,time,equity,cash,symbol,close
0,2026-01-05T00:00:00Z,100000,100000,A,10
1,2026-01-05T00:00:00Z,100000,100000,"B,x",20
2,2026-01-05T00:01:00Z,100500,99000,A,11
3,2026-01-05T00:01:00Z,100400,99000,"B,x",19
4,2026-01-05T00:02:00.25Z,99000,99000,A,12
# stratbench: equity.csv was cut at its cap of 256 MiB,,,,,
`

// TestReadEquity: one point per distinct timestamp, the last event's
// equity; each symbol's closes (a quoted symbol too); buy-and-hold as the
// mean of the symbols' returns from their first close; the cut noticed.
func TestReadEquity(t *testing.T) {
	e, err := ReadEquity(strings.NewReader(equityCSV), 100000)
	if err != nil {
		t.Fatal(err)
	}
	wantT := []int64{1767571200e9, 1767571260e9, 1767571320e9 + 250e6}
	wantEq := []float64{100000, 100400, 99000}
	for i := range wantT {
		if e.Curve.Times[i] != wantT[i] || e.Curve.Equity[i] != wantEq[i] {
			t.Errorf("point %d: %d %v, want %d %v", i, e.Curve.Times[i], e.Curve.Equity[i], wantT[i], wantEq[i])
		}
	}
	if e.Curve.Len() != 3 || e.Events != 5 {
		t.Errorf("%d points, %d events", e.Curve.Len(), e.Events)
	}
	// At the last point: A 12/10 − 1 = 0.2, B 19/20 − 1 = −0.05: mean 0.075.
	if got := e.BuyAndHold[2]; math.Abs(got-107500) > 1e-6 {
		t.Errorf("buy and hold %v, want 107500", got)
	}
	if len(e.Prices) != 2 || e.Prices[1].Symbol != "B,x" || e.Prices[1].Close[1] != 19 {
		t.Errorf("prices %+v", e.Prices)
	}
	if !strings.Contains(e.Note, "cut at its cap") {
		t.Errorf("note %q", e.Note)
	}
}

// TestReadEquityBadLine: a bad line ends the curve before it, with a note
// naming the file and line; older records without closes still read.
func TestReadEquityBadLine(t *testing.T) {
	e, err := ReadEquity(strings.NewReader("event,time,equity,cash\n0,2026-01-05T00:00:00Z,1,1\n1,2026-01-05T00:01:00Z,x,1\n"), 1)
	if err != nil {
		t.Fatal(err)
	}
	if e.Curve.Len() != 1 || e.BuyAndHold != nil || !strings.Contains(e.Note, "equity.csv line 3: equity") {
		t.Errorf("%d points, note %q", e.Curve.Len(), e.Note)
	}
}

func TestParseTime(t *testing.T) {
	for _, s := range []string{"2026-01-05T09:30:00Z", "1970-01-01T00:00:00Z", "2000-02-29T23:59:59.999999999Z", "2026-12-31T12:00:00.5Z",
		"1969-12-31T23:59:59Z", "2026-01-05T09:30:00+02:00", "2400-03-01T00:00:00.000001Z"} {
		want, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseTime(s)
		if err != nil || got != want.UnixNano() {
			t.Errorf("%s: %d %v, want %d", s, got, err, want.UnixNano())
		}
	}
	for _, s := range []string{"", "2026-13-05T09:30:00Z", "2026-01-05T09:30:00.Z", "2026-01-05 09:30:00", "x"} {
		if _, err := parseTime(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
}

// TestPick: the display keeps every stretch's first, last, lowest and
// highest point: a one-point spike and a one-point drop in a long flat
// series both stay.
func TestPick(t *testing.T) {
	n := 1_000_000
	y := make([]float64, n)
	y[123_457], y[876_543] = 5, -7
	idx := pick(n, displayBuckets, y)
	if len(idx) > 4*displayBuckets {
		t.Errorf("%d points", len(idx))
	}
	kept := map[int]bool{}
	for i, j := range idx {
		kept[j] = true
		if i > 0 && j <= idx[i-1] {
			t.Fatalf("indices out of order at %d", i)
		}
	}
	if !kept[123_457] || !kept[876_543] || !kept[0] || !kept[n-1] {
		t.Error("a spike, a drop or an end was lost")
	}
	if got := pick(10, displayBuckets, y[:10]); len(got) != 10 {
		t.Errorf("a short series lost points: %v", got)
	}
}

// FuzzReadRecords: whatever a record file holds (the strategy writes
// beside them), reading it neither panics nor fails to end.
func FuzzReadRecords(f *testing.F) {
	f.Add([]byte(equityCSV))
	f.Add([]byte("symbol,side,qty,entry_time,entry_price,exit_time,exit_price,entry_event,exit_event,fees,gross_pnl,net_pnl,return\nX,long,10,2026-01-01T00:01:00Z,102,2026-01-01T00:03:00Z,105,1,3,2.07,30,27.93,0.027\n"))
	f.Add([]byte("record,time,event,order_id,symbol,side,qty,limit,price,fee,status,reason,cash,position,hook\nexecution,2026-01-01T00:01:00Z,1,1,X,buy,10,,102,1.02,filled,,98978.98,10,\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ReadEquity(bytes.NewReader(b), 100)
		ReadTrades(bytes.NewReader(b))
		ReadFills(bytes.NewReader(b))
	})
}
