package backtest

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"stratbench/contract"
	"stratbench/data"
)

// barsWorker is an in-process contract.Worker with on_bars, as the Python
// bridge serves it: one call per group of a batch's bars with one time. It
// fails the test when a batch splits a timestamp: a call's time must be
// later than the one before.
type barsWorker struct {
	t        testing.TB
	symbols  []string
	onBars   func(w *barsWorker, at int64, bars map[string]barEvent) []contract.Command
	cash     float64
	position map[string]float64
	nextID   int64
	times    []int64 // each call's time
}

func newBarsWorker(t testing.TB, d *Driver) *barsWorker {
	s := d.Setup()
	return &barsWorker{t: t, symbols: s.Data.Symbols, cash: s.Cash, position: map[string]float64{}}
}

func (w *barsWorker) Manifest() contract.Manifest {
	return contract.Manifest{Name: "bars", Hooks: []contract.Hook{contract.HookOnBars, contract.HookOnExecution}, History: 100}
}

func (w *barsWorker) Run(ctx context.Context, b *contract.Batch) (contract.Yield, error) {
	var y contract.Yield
	for _, x := range b.Executions {
		w.cash = x.Cash
		if x.Symbol != "" {
			w.position[x.Symbol] = x.Position
		}
		y.Executions++
	}
	for i := 0; i < b.Bars.Len(); {
		at := b.Bars.Time[i]
		if n := len(w.times); n > 0 && at <= w.times[n-1] {
			w.t.Fatalf("a call at %d after one at %d: the batch at event %d split a timestamp", at, w.times[n-1], b.FirstEvent)
		}
		w.times = append(w.times, at)
		bars := map[string]barEvent{}
		for ; i < b.Bars.Len() && b.Bars.Time[i] == at; i++ {
			s := w.symbols[b.Bars.Symbol[i]]
			bars[s] = barEvent{Event: b.FirstEvent + i, Time: at, Symbol: s, Open: b.Bars.Open[i], High: b.Bars.High[i],
				Low: b.Bars.Low[i], Close: b.Bars.Close[i], Volume: b.Bars.Volume[i]}
			y.Bars++
		}
		if w.onBars != nil {
			if c := w.onBars(w, at, bars); len(c) > 0 {
				y.Commands = c
				return y, nil
			}
		}
	}
	return y, nil
}

func (w *barsWorker) order(op contract.Op, symbol string, qty float64) contract.Command {
	w.nextID++
	return contract.Command{Op: op, OrderID: w.nextID, Symbol: symbol, Qty: qty, Hook: contract.HookOnBars}
}

// gappyBars is bar data of five symbols over 300 minutes in which some
// symbols have no bar at some minutes, and only one has at every 13th.
func gappyBars() (text string, times []int64) {
	var sb strings.Builder
	sb.WriteString("timestamp,symbol,open,high,low,close,volume\n")
	for m := 0; m < 300; m++ {
		ts := int64(1767225600 + m*60)
		some := false
		for s, sym := range []string{"A", "B", "C", "D", "E"} {
			if (m*7+s*3)%11 == 0 || m%13 == 0 && sym != "C" {
				continue
			}
			some = true
			p := strconv.Itoa(100 + (m*(s+1))%17)
			sb.WriteString(strconv.FormatInt(ts, 10) + "," + sym + "," + p + "," + p + ".5," + p + "," + p + ".25,10\n")
		}
		if some {
			times = append(times, ts*1e9)
		}
	}
	return sb.String(), times
}

// TestOnBarsOncePerTimestamp: a strategy with on_bars gets one call per
// distinct timestamp, whatever cuts the batches (a fill due at every
// timestamp, batches smaller than a timestamp), and the same trading
// whatever the batch size.
func TestOnBarsOncePerTimestamp(t *testing.T) {
	text, times := gappyBars()
	set := mustParse(t, "gappy.csv", text)
	hashes := map[string]bool{}
	for _, maxBars := range []int{2, 7, 1 << 16} {
		d := mustDriver(t, set, Options{Cash: 100_000})
		d.maxBars = maxBars
		w := newBarsWorker(t, d)
		w.onBars = func(w *barsWorker, at int64, bars map[string]barEvent) []contract.Command {
			// An order of the timestamp's last symbol at every timestamp:
			// it fills at its next bar, mid-timestamp in event order.
			names := make([]string, 0, len(bars))
			for s := range bars {
				names = append(names, s)
			}
			slices.Sort(names)
			s := names[len(names)-1]
			if w.position[s] > 0 {
				return cmds(w.order("sell", s, w.position[s]))
			}
			return cmds(w.order("buy", s, 1))
		}
		if err := d.Drive(context.Background(), w, discardRecords{}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(w.times, times) {
			t.Fatalf("maxBars %d: %d calls, want one at each of the %d timestamps", maxBars, len(w.times), len(times))
		}
		out := d.Outcome()
		if out.Metrics.Fills < 200 {
			t.Fatalf("maxBars %d: %d fills: the test cuts few batches", maxBars, out.Metrics.Fills)
		}
		hashes[out.OrdersHash] = true
	}
	if len(hashes) != 1 {
		t.Fatalf("the batch size changed the trading: %d orders hashes", len(hashes))
	}
}

// TestOnBarsFillsInPlacementOrder: the orders a timestamp fills fill in the
// order they were placed, whatever their symbols: a sale placed first
// frees the cash a buy of a symbol earlier in the data's order needs.
func TestOnBarsFillsInPlacementOrder(t *testing.T) {
	const data = "timestamp,symbol,open,high,low,close,volume\n" +
		"1767225600,A,100,100,100,100,1\n1767225600,B,100,100,100,100,1\n" +
		"1767225660,A,100,100,100,100,1\n1767225660,B,100,100,100,100,1\n" +
		"1767225720,A,100,100,100,100,1\n1767225720,B,100,100,100,100,1\n"
	for _, sellFirst := range []bool{true, false} {
		d := mustDriver(t, mustParse(t, "two.csv", data), Options{Cash: 1000})
		w := newBarsWorker(t, d)
		w.onBars = func(w *barsWorker, at int64, bars map[string]barEvent) []contract.Command {
			switch len(w.times) {
			case 1: // all the cash but 100 in B
				return cmds(w.order("buy", "B", 9))
			case 2: // from B to A: 900 of A needs the sale's cash
				if sellFirst {
					return cmds(w.order("sell", "B", 9), w.order("buy", "A", 9))
				}
				return cmds(w.order("buy", "A", 9), w.order("sell", "B", 9))
			}
			return nil
		}
		if err := d.Drive(context.Background(), w, discardRecords{}); err != nil {
			t.Fatal(err)
		}
		m := d.Outcome().Metrics
		if sellFirst && (m.Fills != 3 || m.Rejections != 0 || m.Positions["A"] != 9) {
			t.Fatalf("sale placed first: %d fills, %d rejections, positions %v; want the buy of A filled", m.Fills, m.Rejections, m.Positions)
		}
		if !sellFirst && (m.Fills != 2 || m.Rejections != 1 || m.Positions["A"] != 0) {
			t.Fatalf("buy placed first: %d fills, %d rejections, positions %v; want the buy of A rejected", m.Fills, m.Rejections, m.Positions)
		}
	}
}

// TestSymbolFigures: the per-symbol figures add up to the run's: fills,
// trades, fees, and P&L to final_equity - start_equity; a symbol's
// exposure is at most the run's.
func TestSymbolFigures(t *testing.T) {
	path := writeWalk(t, t.TempDir(), 11, []string{"B", "A", "C"}, 2000)
	set, err := openPaths(t, data.Window{}, path)
	if err != nil {
		t.Fatal(err)
	}
	d := mustDriver(t, set, Options{Cash: 100_000, FeeBps: 2})
	w := newScriptWorker(t, d)
	s := &smaCross{fast: 5, slow: 20, sizing: 0.3, closes: map[string][]float64{}}
	w.onData = s.onData
	if err := d.Drive(context.Background(), w, discardRecords{}); err != nil {
		t.Fatal(err)
	}
	out := d.Outcome()
	m := out.Metrics
	if len(out.Symbols) != 3 {
		t.Fatalf("figures of %d symbols, want 3: %+v", len(out.Symbols), out.Symbols)
	}
	var fills, trades int
	var pnl, fees float64
	for sym, f := range out.Symbols {
		fills += f.Fills
		trades += f.Trades
		pnl += f.PnL
		fees += f.Fees
		if f.Exposure <= 0 || f.Exposure > m.Exposure || f.Position != m.Positions[sym] {
			t.Errorf("%s: exposure %v (the run's %v), position %v (%v)", sym, f.Exposure, m.Exposure, f.Position, m.Positions[sym])
		}
		if f.Position == 0 && !closeEnough(f.PnL, f.RealizedPnL) {
			t.Errorf("%s: flat, with pnl %v and realized %v", sym, f.PnL, f.RealizedPnL)
		}
	}
	if fills != m.Fills || trades != m.Trades || !closeEnough(fees, m.Fees) || math.Abs(pnl-(m.FinalEquity-m.StartEquity)) > 1e-6 {
		t.Fatalf("the symbols add up to %d fills, %d trades, %v fees, %v pnl; the run has %d, %d, %v, %v",
			fills, trades, fees, pnl, m.Fills, m.Trades, m.Fees, m.FinalEquity-m.StartEquity)
	}
}
