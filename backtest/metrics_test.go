package backtest

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"stratbench/contract"
	"stratbench/data"
)

const day = int64(24 * time.Hour)

// curve is an equity curve sampled once per distinct timestamp: the equity
// after the last event of that timestamp.
type curve struct {
	time   []int64 // unix nanoseconds, increasing
	equity []float64
}

// returnStats computes the return-based metrics of c from start equity
// through the driver's streaming statistics.
func returnStats(m *contract.Metrics, c curve, start float64) {
	s := newCurveStats(start)
	for i := range c.time {
		s.add(c.time[i], c.equity[i])
	}
	s.result(m)
}

// tradeStats computes the trade metrics of trades through the driver's
// streaming statistics.
func tradeStatsOf(m *contract.Metrics, trades []trade) {
	var s tradeStats
	for _, t := range trades {
		s.add(t.netPnL)
	}
	s.result(m)
}

// sampleCurve takes the last event of each timestamp from per-event equity,
// as the driver's mark does.
func sampleCurve(times []int64, equity []float64) curve {
	var c curve
	for i := range equity {
		if endsTimestamp(times, i) {
			c.time = append(c.time, times[i])
			c.equity = append(c.equity, equity[i])
		}
	}
	return c
}

// medianGap returns the median gap between times through the driver's
// streaming median.
func medianGap(times []int64) float64 {
	var g gapMedian
	for i := 1; i < len(times); i++ {
		g.add(times[i] - times[i-1])
	}
	return g.median()
}

func daily(equity ...float64) curve {
	c := curve{equity: equity}
	for i := range equity {
		c.time = append(c.time, int64(i)*day)
	}
	return c
}

func TestReturnStats(t *testing.T) {
	tests := []struct {
		name  string
		c     curve
		start float64
		want  contract.Metrics
	}{
		{
			// Returns +10%, +10%, -10% a day. Expected values computed by hand
			// (Python): mean 1/30, sample std 0.11547, 365.25 periods a year.
			name: "three daily returns", c: daily(100, 110, 121, 108.9), start: 100,
			want: contract.Metrics{
				Sharpe: 5.517019122678486, Sortino: 11.03403824535698, Volatility: 2.2068076490713917,
				MaxDrawdown: 0.1, MaxDrawdownDurationS: 86400, CAGR: 32220.39658302575, Calmar: 322203.9658302575,
				BarIntervalS: 86400, PeriodsPerYear: 365.25,
			},
		},
		{
			// Down 10% from the start, back at the peak three hours later.
			name: "drawdown that recovers",
			c: curve{
				time:   []int64{0, 3600e9, 7200e9, 10800e9, 14400e9},
				equity: []float64{100, 90, 95, 100, 105},
			},
			start: 100,
			want: contract.Metrics{MaxDrawdown: 0.1, MaxDrawdownDurationS: 10800, BarIntervalS: 3600, PeriodsPerYear: 8766,
				Sharpe: 17.82725321364253, Sortino: 27.239410704658937, Volatility: 7.1529306133136545,
				CAGR: 2.731171121880993e+46, Calmar: 2.731171121880993e+47},
		},
		{
			// The start equity is the first peak; still under water at the end.
			name: "drawdown from the start, open at the end", c: daily(95, 96), start: 100,
			// One return: no standard deviation, so no Sharpe ratio.
			want: contract.Metrics{MaxDrawdown: 0.05, MaxDrawdownDurationS: 86400, BarIntervalS: 86400, PeriodsPerYear: 365.25,
				CAGR: -0.9999996653676928, Calmar: -19.999993307353854},
		},
		{
			name: "flat: no variance, no drawdown", c: daily(100, 100, 100), start: 100,
			want: contract.Metrics{BarIntervalS: 86400, PeriodsPerYear: 365.25},
		},
		{
			name: "one timestamp", c: daily(100), start: 100,
			want: contract.Metrics{},
		},
		{
			name: "ruin", c: daily(100, 50, -10), start: 100,
			want: contract.Metrics{MaxDrawdown: 1.1, MaxDrawdownDurationS: 2 * 86400, CAGR: -1, Calmar: -1 / 1.1,
				BarIntervalS: 86400, PeriodsPerYear: 365.25,
				// Returns -50% and -120%.
				Sharpe: -32.819427111367546, Sortino: -17.671999213813297, Volatility: 9.459717226217704},
		},
		{
			// Bars every minute with a night off: the interval is the median
			// gap, and annualising counts the periods actually observed.
			name: "gaps",
			c: curve{
				time:   []int64{0, 60e9, 120e9, 120e9 + day},
				equity: []float64{100, 100, 100, 100},
			},
			start: 100,
			want:  contract.Metrics{BarIntervalS: 60, PeriodsPerYear: 3 / ((120 + 86400) / secondsPerYear)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m contract.Metrics
			returnStats(&m, tc.c, tc.start)
			got := []float64{m.Sharpe, m.Sortino, m.Volatility, m.MaxDrawdown, m.MaxDrawdownDurationS, m.CAGR, m.Calmar, m.BarIntervalS, m.PeriodsPerYear}
			w := tc.want
			want := []float64{w.Sharpe, w.Sortino, w.Volatility, w.MaxDrawdown, w.MaxDrawdownDurationS, w.CAGR, w.Calmar, w.BarIntervalS, w.PeriodsPerYear}
			names := []string{"sharpe", "sortino", "volatility", "max_drawdown", "max_drawdown_duration_s", "cagr", "calmar", "bar_interval_s", "periods_per_year"}
			for i := range got {
				if !closeEnough(got[i], want[i]) {
					t.Errorf("%s = %v, want %v", names[i], got[i], want[i])
				}
			}
		})
	}
}

func TestTradeStats(t *testing.T) {
	var m contract.Metrics
	tradeStatsOf(&m, []trade{{netPnL: 10}, {netPnL: -5}, {netPnL: 20}, {netPnL: -5}, {netPnL: 0}})
	if m.Trades != 5 || m.WinRate != 0.4 || m.Expectancy != 4 || m.ProfitFactor != 3 {
		t.Errorf("trades=%d win_rate=%v expectancy=%v profit_factor=%v, want 5, 0.4, 4, 3", m.Trades, m.WinRate, m.Expectancy, m.ProfitFactor)
	}
	var none contract.Metrics
	tradeStatsOf(&none, nil)
	if !reflect.DeepEqual(none, contract.Metrics{}) {
		t.Errorf("no trades: %+v", none)
	}
}

func TestSampleCurve(t *testing.T) {
	c := sampleCurve([]int64{1, 1, 2, 3, 3, 3}, []float64{10, 11, 12, 13, 14, 15})
	if !reflect.DeepEqual(c.time, []int64{1, 2, 3}) || !reflect.DeepEqual(c.equity, []float64{11, 12, 15}) {
		t.Errorf("curve %+v", c)
	}
}

func TestBookFIFO(t *testing.T) {
	// Buy 10 @100, buy 10 @110, sell 15 @120, sell 10 @90 with short
	// selling: closes 10 from the first lot (+200), 5 from the second
	// (+50), 5 more of the second (-100), and opens a 5 short.
	d := mustDriver(t, mustParse(t, "bars.csv", oneSymbolCSV), Options{Cash: 1e6, AllowShort: true})
	holdAll(t, d)
	rec := newMemRecords()
	d.openRecords(rec)
	fill := func(buy bool, qty, price float64, i int) {
		o := &order{symbol: 0, buy: buy, qty: qty}
		d.book(o, i, price, qty*price/1000)
	}
	fill(true, 10, 100, 1)
	fill(true, 10, 110, 2)
	fill(false, 15, 120, 3)
	fill(false, 10, 90, 4)
	d.flushRecords()
	trades := readTrades(t, rec[tradesFile].String())
	var got []string
	for _, tr := range trades {
		got = append(got, fmtFloat(tr.qty)+"@"+fmtFloat(tr.entryPrice)+"->"+fmtFloat(tr.exitPrice)+" gross "+fmtFloat(tr.grossPnL))
	}
	want := []string{"10@100->120 gross 200", "5@110->120 gross 50", "5@110->90 gross -100"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("trades %v, want %v", got, want)
	}
	// Fees are shared pro rata: the first trade carries its lot's whole
	// opening fee (1) and 10/15 of the closing fee (1.8).
	if tr := trades[0]; !closeEnough(tr.fees, 1+1.8*10/15) || !closeEnough(tr.netPnL, 200-tr.fees) {
		t.Errorf("first trade fees %v net %v", tr.fees, tr.netPnL)
	}
	if l := d.lots[0]; len(l) != 1 || l[0].long || l[0].qty != 5 || l[0].price != 90 {
		t.Errorf("open lots %+v, want a 5 short at 90", l)
	}
}

func TestLTTB(t *testing.T) {
	ys := make([]float64, 10_000)
	for i := range ys {
		ys[i] = math.Sin(float64(i) / 500)
	}
	ys[4321] = 50 // a spike
	ys[7000] = -50
	out := lttb(ys, 400)
	if len(out) != 400 || out[0] != ys[0] || out[399] != ys[len(ys)-1] {
		t.Fatalf("%d points, ends %v %v", len(out), out[0], out[len(out)-1])
	}
	hasMax, hasMin := false, false
	for _, y := range out {
		hasMax = hasMax || y == 50
		hasMin = hasMin || y == -50
	}
	if !hasMax || !hasMin {
		t.Error("downsampling lost the extremes")
	}
	if short := lttb([]float64{1, 2, 3}, 400); !reflect.DeepEqual(short, []float64{1, 2, 3}) {
		t.Errorf("short curve %v", short)
	}
}

// replaySample runs the SMA re-statement over the bundled sample.
func replaySample(t *testing.T) (*Driver, contract.Outcome, memRecords) {
	t.Helper()
	drv := mustDriver(t, sample(t, data.Window{}), Options{Cash: 100_000, FeeBps: 2, SlippageBps: 1})
	w := newScriptWorker(t, drv)
	s := &smaCross{fast: 10, slow: 30, sizing: 0.495, closes: map[string][]float64{}}
	w.onData = s.onData
	rec := newMemRecords()
	if err := drv.Drive(context.Background(), w, rec); err != nil {
		t.Fatal(err)
	}
	return drv, drv.Outcome(), rec
}

func TestDeterminism(t *testing.T) {
	_, a, ra := replaySample(t)
	_, b, rb := replaySample(t)
	ja, _ := json.Marshal(a.Metrics)
	jb, _ := json.Marshal(b.Metrics)
	if string(ja) != string(jb) || a.OrdersHash != b.OrdersHash || !reflect.DeepEqual(a.Equity, b.Equity) {
		t.Fatalf("two runs differ:\n%s\n%s\n%s %s", ja, jb, a.OrdersHash, b.OrdersHash)
	}
	if len(ra) != 3 {
		t.Fatalf("record files %v, want equity.csv, trades.csv and orders.csv", slices.Sorted(maps.Keys(ra)))
	}
	for name, sa := range ra {
		if sa.String() != rb[name].String() {
			t.Errorf("%s differs between runs", name)
		}
	}
	m := a.Metrics
	if m.Fills == 0 || m.Trades == 0 || len(a.OrdersHash) != 64 {
		t.Errorf("the sample run did not trade: %s", ja)
	}
	// A different flag gives a different order list.
	drv := mustDriver(t, sample(t, data.Window{}), Options{Cash: 100_000, FeeBps: 3, SlippageBps: 1})
	w := newScriptWorker(t, drv)
	w.onData = (&smaCross{fast: 10, slow: 30, sizing: 0.495, closes: map[string][]float64{}}).onData
	drv.Drive(context.Background(), w, newMemRecords())
	if drv.Outcome().OrdersHash == a.OrdersHash {
		t.Error("orders hash ignores the fees")
	}
}

func TestMetricsJSON(t *testing.T) {
	_, out, _ := replaySample(t)
	raw, err := json.Marshal(out.Metrics)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	json.Unmarshal(raw, &obj)
	// The keys every report carries, and the others docs/fills-and-metrics.md documents.
	for _, k := range []string{"start_equity", "final_equity", "total_return", "sharpe", "max_drawdown", "fills", "trades",
		"win_rate", "fees", "cagr", "sortino", "calmar", "max_drawdown_duration_s", "profit_factor", "expectancy",
		"exposure", "buy_and_hold_return", "warmup_bars", "open_orders", "events", "bar_interval_s", "periods_per_year"} {
		if _, ok := obj[k]; !ok {
			t.Errorf("metrics lack %q", k)
		}
	}
	m := out.Metrics
	if m.Events != 20160 || m.BarIntervalS != 60 || !closeEnough(m.PeriodsPerYear, 10079/(10079*60/secondsPerYear)) {
		t.Errorf("events %d interval %v periods/year %v", m.Events, m.BarIntervalS, m.PeriodsPerYear)
	}
	// SYNA's 30th bar is event 58: no order can come earlier.
	if m.WarmupBars < 58 || m.WarmupBars >= m.Events {
		t.Errorf("warm-up %d bars", m.WarmupBars)
	}
	if m.Exposure <= 0 || m.Exposure >= 1 || !closeEnough(m.TotalReturn, m.FinalEquity/m.StartEquity-1) {
		t.Errorf("exposure %v total return %v", m.Exposure, m.TotalReturn)
	}
	if len(out.Equity) != displayPoints {
		t.Errorf("display curve has %d points", len(out.Equity))
	}
}

func TestArtifacts(t *testing.T) {
	drv := mustDriver(t, mustParse(t, "bars.csv", oneSymbolCSV), Options{Cash: 100_000, FeeBps: 10})
	w := newScriptWorker(t, drv)
	w.onData = func(w *scriptWorker, ev barEvent) []contract.Command {
		switch ev.Event {
		case 0:
			return cmds(w.order("buy", "X", 10))
		case 1:
			return cmds(w.order("sell", "X", 10, 200), w.cancel(7))
		case 2:
			return cmds(w.cancel(2), w.order("sell", "X", 10))
		}
		return nil
	}
	rec := newMemRecords()
	if err := drv.Drive(context.Background(), w, rec); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for name, b := range rec {
		files[name] = b.String()
	}
	// Buy 10 at 102 (fee 1.02) at event 1; sell 10 at 105 (fee 1.05) at event 3.
	wantEquity := `event,time,equity,cash,symbol,close
0,2026-01-01T00:00:00Z,100000,100000,X,100
1,2026-01-01T00:01:00Z,99998.98,98978.98,X,102
2,2026-01-01T00:02:00Z,100008.98,98978.98,X,103
3,2026-01-01T00:03:00Z,100027.93,100027.93,X,105
4,2026-01-01T00:04:00Z,100027.93,100027.93,X,99
`
	if files["equity.csv"] != wantEquity {
		t.Errorf("equity.csv:\n%s\nwant\n%s", files["equity.csv"], wantEquity)
	}
	wantTrades := `symbol,side,qty,entry_time,entry_price,exit_time,exit_price,entry_event,exit_event,fees,gross_pnl,net_pnl,return
X,long,10,2026-01-01T00:01:00Z,102,2026-01-01T00:03:00Z,105,1,3,2.0700000000000003,30,27.93,0.02738235294117647
`
	if files["trades.csv"] != wantTrades {
		t.Errorf("trades.csv:\n%s\nwant\n%s", files["trades.csv"], wantTrades)
	}
	wantOrders := `record,time,event,order_id,symbol,side,qty,limit,price,fee,status,reason,cash,position,hook
order,2026-01-01T00:00:00Z,0,1,X,buy,10,,,,,,,,on_data
execution,2026-01-01T00:01:00Z,1,1,X,buy,10,,102,1.02,filled,,98978.98,10,
order,2026-01-01T00:01:00Z,1,2,X,sell,10,200,,,,,,,on_data
cancel,2026-01-01T00:01:00Z,1,7,,,,,,,,,,,on_data
execution,2026-01-01T00:01:00Z,1,7,,,0,,0,0,rejected,cancel: no order 7,98978.98,0,
cancel,2026-01-01T00:02:00Z,2,2,,,,,,,,,,,on_data
execution,2026-01-01T00:02:00Z,2,2,X,sell,10,,0,0,canceled,,98978.98,10,
order,2026-01-01T00:02:00Z,2,3,X,sell,10,,,,,,,,on_data
execution,2026-01-01T00:03:00Z,3,3,X,sell,10,,105,1.05,filled,,100027.93,0,
`
	if files["orders.csv"] != wantOrders {
		t.Errorf("orders.csv:\n%s\nwant\n%s", files["orders.csv"], wantOrders)
	}
}

func TestMedianGap(t *testing.T) {
	for _, tc := range []struct {
		times []int64
		want  float64
	}{
		{[]int64{0, 60e9}, 60},
		{[]int64{0, 60e9, 120e9, 86520e9}, 60},
		{[]int64{0, 1e9, 4e9}, 2},
		{[]int64{0, 1e9, 4e9, 10e9, 11e9}, 2},
		{[]int64{0, 5e9, 6e9, 16e9, 19e9}, 4},
	} {
		if got := medianGap(tc.times); got != tc.want {
			t.Errorf("medianGap(%v) = %v, want %v", tc.times, got, tc.want)
		}
	}
}

func TestMetricsStayFinite(t *testing.T) {
	// A return from a near-zero equity overflows; the metrics must still
	// encode as JSON.
	var m contract.Metrics
	returnStats(&m, daily(5e-324, 1e300, 1e300, 5e-324), 100)
	sanitize(&m)
	if _, err := json.Marshal(m); err != nil {
		t.Fatalf("metrics do not encode: %v (%+v)", err, m)
	}
	// Every float field is covered by sanitize.
	v := reflect.ValueOf(&m).Elem()
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Kind() == reflect.Float64 {
			f.SetFloat(math.NaN())
		}
	}
	sanitize(&m)
	if _, err := json.Marshal(m); err != nil {
		t.Errorf("sanitize misses a field: %v", err)
	}
}

// readTrades parses trades.csv back into trades (numbers are written
// exactly, so they read back exactly).
func readTrades(t *testing.T, text string) []trade {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("trades.csv: %v\n%s", err, text)
	}
	num := func(s string) float64 {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("trades.csv: %v", err)
		}
		return f
	}
	var out []trade
	for _, r := range rows[1:] {
		out = append(out, trade{long: r[1] == "long", qty: num(r[2]), entryPrice: num(r[4]), exitPrice: num(r[6]),
			fees: num(r[9]), grossPnL: num(r[10]), netPnL: num(r[11])})
	}
	return out
}
