package backtest

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"math"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"stratbench/contract"
	"stratbench/data"
)

// floodWorker runs one bar per call and places perBar orders on each: most
// rejected (a symbol not in the data, a quantity beyond the cash), a few
// filled, some resting limits cancelled a bar later. It keeps nothing, so
// that the heap measures the driver.
type floodWorker struct {
	perBar   int
	nextID   int64
	resting  []int64
	execs    int
	maxQueue int
}

func (w *floodWorker) Manifest() contract.Manifest { return contract.Manifest{} }

func (w *floodWorker) Run(ctx context.Context, b *contract.Batch) (contract.Yield, error) {
	w.execs += len(b.Executions)
	w.maxQueue = max(w.maxQueue, len(b.Executions))
	y := contract.Yield{Executions: len(b.Executions)}
	if b.Bars.Len() == 0 {
		return y, nil
	}
	y.Bars = 1
	sym := []string{"SYNA", "SYNB"}[b.Bars.Symbol[0]]
	order := func(symbol string, qty float64, limit *float64) {
		w.nextID++
		y.Commands = append(y.Commands, contract.Command{Op: contract.OpBuy, OrderID: w.nextID, Symbol: symbol, Qty: qty, Limit: limit, Hook: contract.HookOnData})
	}
	for _, id := range w.resting {
		y.Commands = append(y.Commands, contract.Command{Op: contract.OpCancel, OrderID: id, Hook: contract.HookOnData})
	}
	w.resting = w.resting[:0]
	far := 0.01
	for i := 0; i < w.perBar; i++ {
		switch i % 4 {
		case 0:
			order("NOPE", 1, nil)
		case 1:
			order(sym, 1e12, nil)
		case 2:
			order(sym, 1, &far)
			w.resting = append(w.resting, w.nextID)
		default:
			if i < 8 {
				order(sym, 1, nil)
			} else {
				order(sym, -1, nil)
			}
		}
	}
	return y, nil
}

// TestOrdersLeaveMemory: a million orders through the driver leave only
// the open ones in memory, a bounded window of closed ones, and a heap that
// does not grow with them.
func TestOrdersLeaveMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a million orders")
	}
	window, _ := data.ParseWindow("", "2026-01-05T04:09:00Z") // 500 bars
	drv, err := NewDriver(sample(t, window), Options{Cash: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	w := &floodWorker{perBar: 2000}
	if err := drv.Drive(context.Background(), w, discardRecords{}); err != nil {
		t.Fatal(err)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	m := drv.Outcome().Metrics
	if w.nextID != 500*2000 || m.Fills == 0 || m.Rejections < 700_000 || m.Cancels == 0 {
		t.Fatalf("%d orders: %d fills, %d rejections, %d cancels", w.nextID, m.Fills, m.Rejections, m.Cancels)
	}
	if len(drv.byID) != drv.openCount || len(drv.orders) > w.perBar {
		t.Errorf("%d orders indexed, %d slots, for %d open orders", len(drv.byID), len(drv.orders), drv.openCount)
	}
	if drv.closed.n != closedKept || len(drv.closed.byID) != closedKept || len(drv.closed.ring) != closedKept {
		t.Errorf("closed orders kept: %d in the ring, %d indexed, want %d", drv.closed.n, len(drv.closed.byID), closedKept)
	}
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap held after %d orders: %.1f MiB", w.nextID, float64(held)/(1<<20))
	// Before streaming, the order log alone held 2 records of 96 bytes per
	// order: 180 MiB here.
	if held > 32<<20 {
		t.Errorf("the driver holds %.1f MiB after %d orders", float64(held)/(1<<20), w.nextID)
	}
	runtime.KeepAlive(drv)
}

// TestCancelRepliesInBoundedMemory: a cancel of one of the latest closed
// orders says what happened to it; one of an order closed before them gets
// a generic reason; one of an id never used says there is no such order.
// Order ids must be new and increasing.
func TestCancelRepliesInBoundedMemory(t *testing.T) {
	drv := mustDriver(t, mustParse(t, "bars.csv", oneSymbolCSV), DefaultOptions())
	w := newScriptWorker(t, drv)
	n := int64(closedKept + 10)
	place := func(id int64, symbol string) contract.Command {
		return contract.Command{Op: contract.OpBuy, OrderID: id, Symbol: symbol, Qty: 1, Hook: contract.HookOnData}
	}
	cancel := func(id int64) contract.Command {
		return contract.Command{Op: contract.OpCancel, OrderID: id, Hook: contract.HookOnData}
	}
	w.onData = func(w *scriptWorker, ev barEvent) []contract.Command {
		switch ev.Event {
		case 0:
			var c []contract.Command
			for id := int64(1); id <= n; id++ {
				c = append(c, place(id, "NOPE"))
			}
			return c
		case 1:
			return cmds(cancel(1), cancel(n), cancel(n+100), place(5, "X"), place(n, "X"), place(n+1, "X"), cancel(n+1))
		}
		return nil
	}
	if err := drv.Drive(context.Background(), w, newMemRecords()); err != nil {
		t.Fatal(err)
	}
	var got []wantExec
	for _, x := range w.execs[n:] {
		got = append(got, fromExecution(x))
	}
	want := []wantExec{
		{id: 1, status: "rejected", event: 1, reason: "cancel: no open order 1 (nor among the latest 65536 closed orders, which are remembered)"},
		{id: n, status: "rejected", side: "buy", symbol: "NOPE", qty: 1, event: 1, reason: "cancel: order " + strconv.FormatInt(n, 10) + " already rejected"},
		{id: n + 100, status: "rejected", event: 1, reason: "cancel: no order " + strconv.FormatInt(n+100, 10)},
		{id: 5, status: "rejected", side: "buy", symbol: "X", qty: 1, event: 1, reason: "order id 5 is not new: order ids must increase (the last was " + strconv.FormatInt(n, 10) + ")"},
		{id: n, status: "rejected", side: "buy", symbol: "X", qty: 1, event: 1, reason: "duplicate order id " + strconv.FormatInt(n, 10)},
		{id: n + 1, status: "canceled", side: "buy", symbol: "X", qty: 1, event: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("%d executions after the first %d, want %d: %v", len(got), n, len(want), got)
	}
	for i := range want {
		if !want[i].matches(got[i]) {
			t.Errorf("execution %d:\n got %v\nwant %v", i, got[i], want[i])
		}
	}
	if drv.closed.n != closedKept {
		t.Errorf("%d closed orders remembered, want %d", drv.closed.n, closedKept)
	}
}

// TestClosedOrdersBoundNames: orders for symbols the worker made up keep
// at most closedNameBytes of names.
func TestClosedOrdersBoundNames(t *testing.T) {
	c := newClosedOrders()
	name := strings.Repeat("n", 4096)
	for id := int64(1); id <= 10_000; id++ {
		c.add(closedOrder{id: id, name: strings.Clone(name), foreign: true})
	}
	if c.nameBytes > closedNameBytes || c.n != closedNameBytes/4096 || !c.has(10_000) || c.has(1) {
		t.Errorf("%d name bytes in %d orders", c.nameBytes, c.n)
	}
}

// limitedRecords refuses every write after its first limit bytes of each
// file, and counts the writes made after a refusal.
type limitedRecords struct {
	limit int
	files map[string]*limitedWriter
}

type limitedWriter struct {
	limit, n         int
	refused, writes  int
	writesAfterRefus int
}

var errFull = errors.New("full")

func (w *limitedWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.refused > 0 {
		w.writesAfterRefus++
		return 0, errFull
	}
	if w.n+len(p) > w.limit {
		w.refused++
		return 0, errFull
	}
	w.n += len(p)
	return len(p), nil
}

func (r *limitedRecords) Create(name string) io.Writer {
	w := &limitedWriter{limit: r.limit}
	r.files[name] = w
	return w
}

// TestRecordsStopWhenRefused: once the engine refuses a record file, the
// driver writes no more to it (it stops formatting its lines), and the
// replay, its metrics and its orders hash are what they are with every
// record kept.
func TestRecordsStopWhenRefused(t *testing.T) {
	run := func(rec contract.Records) contract.Outcome {
		drv := mustDriver(t, sample(t, data.Window{}), Options{Cash: 100_000, FeeBps: 2, SlippageBps: 1})
		w := newScriptWorker(t, drv)
		w.onData = (&smaCross{fast: 10, slow: 30, sizing: 0.495, closes: map[string][]float64{}}).onData
		if err := drv.Drive(context.Background(), w, rec); err != nil {
			t.Fatal(err)
		}
		return drv.Outcome()
	}
	full := run(newMemRecords())
	limited := &limitedRecords{limit: 100 << 10, files: map[string]*limitedWriter{}}
	cut := run(limited)
	if !reflect.DeepEqual(full.Metrics, cut.Metrics) || full.OrdersHash != cut.OrdersHash || !reflect.DeepEqual(full.Equity, cut.Equity) {
		t.Fatal("refused records changed the outcome")
	}
	for name, w := range limited.files {
		if name != tradesFile && w.refused != 1 {
			t.Errorf("%s: %d refusals, want 1 (the file is larger than the limit)", name, w.refused)
		}
		if w.writesAfterRefus != 0 {
			t.Errorf("%s: %d writes after the refusal", name, w.writesAfterRefus)
		}
	}
}

// twoPassStats is the return statistics computed the way they were before
// they streamed: the mean first, then the squared deviations from it.
func twoPassStats(c curve, start float64) (sharpe, volatility float64) {
	var m contract.Metrics
	returnStats(&m, c, start) // for periods_per_year
	var rets []float64
	var sum float64
	for i := 1; i < len(c.equity); i++ {
		r := (c.equity[i] - c.equity[i-1]) / math.Abs(c.equity[i-1])
		rets = append(rets, r)
		sum += r
	}
	mean := sum / float64(len(rets))
	var sq float64
	for _, r := range rets {
		sq += (r - mean) * (r - mean)
	}
	std := math.Sqrt(sq / float64(len(rets)-1))
	annual := math.Sqrt(m.PeriodsPerYear)
	return mean / std * annual, std * annual
}

// TestStreamingStatsMatchTwoPass: over a long random walk, the streaming
// statistics equal a pass over the stored curve, exactly for everything
// summed in the same order, and to 1e-12 relative for sharpe and volatility
// (Welford's variance and the two-pass variance round differently: the
// sample run's differ in the 14th significant digit).
func TestStreamingStatsMatchTwoPass(t *testing.T) {
	rng := splitmix64(3)
	c := curve{}
	e := 100_000.0
	for i := 0; i < 200_000; i++ {
		e *= 1 + 0.001*rng.normal()
		c.time = append(c.time, int64(i)*60e9)
		c.equity = append(c.equity, e)
	}
	var m contract.Metrics
	returnStats(&m, c, 100_000)
	sharpe, volatility := twoPassStats(c, 100_000)
	rel := func(a, b float64) float64 { return math.Abs(a-b) / math.Max(math.Abs(a), math.Abs(b)) }
	if rel(m.Sharpe, sharpe) > 1e-12 || rel(m.Volatility, volatility) > 1e-12 {
		t.Errorf("sharpe %v / %v, volatility %v / %v (streaming / two-pass)", m.Sharpe, sharpe, m.Volatility, volatility)
	}
	t.Logf("relative differences: sharpe %.1e, volatility %.1e", rel(m.Sharpe, sharpe), rel(m.Volatility, volatility))
	if m.Sharpe == 0 || m.Sortino == 0 || m.MaxDrawdown == 0 || m.BarIntervalS != 60 {
		t.Errorf("metrics %+v", m)
	}
}

// TestGapMedianBeyondExact: with more distinct gaps than it counts exactly,
// the median is within a histogram bucket's half width (0.8%).
func TestGapMedianBeyondExact(t *testing.T) {
	rng := splitmix64(9)
	var g gapMedian
	var gaps []int64
	for i := 0; i < 50_001; i++ {
		gap := int64(1e9 + rng.next()%(1e12))
		gaps = append(gaps, gap)
		g.add(gap)
	}
	if g.hist == nil {
		t.Fatal("still exact with 50,000 distinct gaps")
	}
	slices.Sort(gaps)
	exact := float64(gaps[len(gaps)/2]) / 1e9
	if got := g.median(); math.Abs(got-exact) > exact/128 {
		t.Errorf("median %v, exact %v", got, exact)
	}
	for _, v := range []int64{0, 1, 127, 128, 129, 1e9, 1e12, math.MaxInt64} {
		if b := gapBucket(v); b < 0 || b >= gapBuckets {
			t.Fatalf("gap %d in bucket %d of %d", v, b, gapBuckets)
		}
		if mid := gapValue(gapBucket(v)); math.Abs(float64(mid-v)) > float64(v)/128 {
			t.Errorf("gap %d read back as %d", v, mid)
		}
	}
}

// TestDisplayCurve: up to displayBuckets events the display curve is the
// downsampling of every value; beyond, of a bounded sketch that keeps the
// extremes and the ends.
func TestDisplayCurve(t *testing.T) {
	small := make([]float64, displayBuckets)
	var d displayCurve
	for i := range small {
		small[i] = math.Sin(float64(i) / 50)
		d.add(small[i])
	}
	if !reflect.DeepEqual(lttb(d.values(), displayPoints), lttb(small, displayPoints)) {
		t.Error("with few events the display curve differs from the downsampled curve")
	}
	var big displayCurve
	n := 1_000_003
	for i := 0; i < n; i++ {
		v := math.Sin(float64(i) / 5000)
		switch i {
		case 123_457:
			v = 50
		case 765_431:
			v = -50
		}
		big.add(v)
	}
	vals := big.values()
	if len(vals) > 2*displayBuckets+2 {
		t.Fatalf("the sketch holds %d values", len(vals))
	}
	out := lttb(vals, displayPoints)
	if len(out) != displayPoints || out[0] != 0 || out[len(out)-1] != math.Sin(float64(n-1)/5000) {
		t.Fatalf("%d points, ends %v %v", len(out), out[0], out[len(out)-1])
	}
	if !slices.Contains(out, 50) || !slices.Contains(out, -50) {
		t.Error("the display curve lost the extremes")
	}
}

// TestStoppedInsideATimestamp: a replay stopped between two bars of one
// timestamp ends its metrics' curve with the equity after the last bar run,
// as a pass over the stored per-event equity did.
func TestStoppedInsideATimestamp(t *testing.T) {
	drv := mustDriver(t, mustParse(t, "bars.csv", twoSymbolCSV), Options{Cash: 1000})
	w := newScriptWorker(t, drv)
	w.stopAt = 2 // X at the second timestamp; Y's bar of it never runs
	w.onData = func(w *scriptWorker, ev barEvent) []contract.Command {
		if ev.Event == 0 {
			return cmds(w.order("buy", "X", 5))
		}
		return nil
	}
	rec := newMemRecords()
	if err := drv.Drive(context.Background(), w, rec); !errors.Is(err, contract.ErrStopped) {
		t.Fatal(err)
	}
	m := drv.Outcome().Metrics
	rows, err := csv.NewReader(bytes.NewReader(rec[equityFile].Bytes())).ReadAll()
	if err != nil || len(rows) != 4 {
		t.Fatalf("equity.csv: %v %v", err, rows)
	}
	var equity []float64
	for _, r := range rows[1:] {
		v, _ := strconv.ParseFloat(r[2], 64)
		equity = append(equity, v)
	}
	times := drv.bars.Time[:3]
	var want contract.Metrics
	returnStats(&want, sampleCurve(times, equity), 1000)
	if m.MaxDrawdown != want.MaxDrawdown || m.CAGR != want.CAGR || m.PeriodsPerYear != want.PeriodsPerYear ||
		m.MaxDrawdownDurationS != want.MaxDrawdownDurationS || m.Events != 3 {
		t.Errorf("metrics %+v, want those of the curve %v", m, sampleCurve(times, equity))
	}
}

// FuzzAppendCSV: a field is written as encoding/csv writes it.
func FuzzAppendCSV(f *testing.F) {
	for _, s := range []string{"", "plain", "a,b", `say "hi"`, " lead", "\tx", "\\.", "line\nbreak", "cr\r", "\u00a0nbsp", "é,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		cw := csv.NewWriter(&want)
		cw.Write([]string{s, "end"})
		cw.Flush()
		got := append(appendCSV(nil, s), ",end\n"...)
		if string(got) != want.String() {
			t.Errorf("appendCSV(%q) = %q, encoding/csv %q", s, got, want.String())
		}
	})
}

// amplifier places one order on the first bar and answers each execution
// with perExec orders for a symbol not in the data, or, with atOnce, places
// atOnce such orders on the first bar and answers nothing.
type amplifier struct {
	perExec, atOnce int
	nextID          int64
}

func (w *amplifier) Manifest() contract.Manifest { return contract.Manifest{} }

func (w *amplifier) orders(n int) []contract.Command {
	c := make([]contract.Command, n)
	for i := range c {
		w.nextID++
		c[i] = contract.Command{Op: contract.OpBuy, OrderID: w.nextID, Symbol: "NOPE", Qty: 1, Hook: contract.HookOnExecution}
	}
	return c
}

func (w *amplifier) Run(ctx context.Context, b *contract.Batch) (contract.Yield, error) {
	if len(b.Executions) > 0 {
		if w.perExec == 0 {
			return contract.Yield{Executions: len(b.Executions)}, nil
		}
		return contract.Yield{Executions: 1, Commands: w.orders(w.perExec)}, nil
	}
	y := contract.Yield{Bars: 1}
	if b.FirstEvent == 0 {
		y.Commands = w.orders(max(w.atOnce, 1))
	}
	return y, nil
}

// TestAmplifyingOnExecutionFails: on_execution answering each rejection
// with more orders never lets the replay reach the next bar; the driver
// stops it as a timeout in on_execution once the executions waiting for it
// take maxPendingBytes, while one hook's worth of orders (a protocol
// message holds about 290,000) passes.
func TestAmplifyingOnExecutionFails(t *testing.T) {
	drv := mustDriver(t, mustParse(t, "bars.csv", oneSymbolCSV), DefaultOptions())
	err := drv.Drive(context.Background(), &amplifier{perExec: 1000}, discardRecords{})
	var f *contract.Failure
	if !errors.As(err, &f) || f.Kind != contract.KindTimeout || f.Hook != contract.HookOnExecution || f.EventIndex == nil || *f.EventIndex != 1 ||
		!strings.Contains(f.Message, "stuck at event 1") {
		t.Fatalf("Drive = %v (%+v), want a timeout in on_execution at event 1", err, f)
	}
	if drv.queue.bytes > maxPendingBytes+1000*256 {
		t.Errorf("%d bytes of executions waited", drv.queue.bytes)
	}
	one := mustDriver(t, mustParse(t, "bars.csv", oneSymbolCSV), DefaultOptions())
	if err := one.Drive(context.Background(), &amplifier{atOnce: 290_000}, discardRecords{}); err != nil {
		t.Fatalf("one hook's worth of rejected orders: %v", err)
	}
	if m := one.Outcome().Metrics; m.Rejections != 290_000 || m.Events != 5 {
		t.Errorf("rejections %d events %d", m.Rejections, m.Events)
	}
}

// TestOpenOrdersCap: orders beyond maxOpenOrders open ones are rejected.
func TestOpenOrdersCap(t *testing.T) {
	drv := mustDriver(t, mustParse(t, "bars.csv", oneSymbolCSV), DefaultOptions())
	w := newScriptWorker(t, drv)
	w.onData = func(w *scriptWorker, ev barEvent) []contract.Command {
		if ev.Event != 0 {
			return nil
		}
		c := make([]contract.Command, maxOpenOrders+3)
		for i := range c {
			c[i] = w.order("buy", "X", 1, 0.01)
		}
		return c
	}
	if err := drv.Drive(context.Background(), w, discardRecords{}); err != nil {
		t.Fatal(err)
	}
	m := drv.Outcome().Metrics
	if m.OpenOrders != maxOpenOrders || m.Rejections != 3 || len(w.execs) != 3 ||
		w.execs[0].Reason != "too many open orders: 262144 are open, stratbench's limit" {
		t.Fatalf("open %d rejections %d executions %+v", m.OpenOrders, m.Rejections, w.execs[:min(len(w.execs), 1)])
	}
}
