package backtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"stratbench/contract"
	"stratbench/data"
)

const oneSymbolCSV = `timestamp,symbol,open,high,low,close,volume
2026-01-01T00:00:00Z,X,100,101,99,100,10
2026-01-01T00:01:00Z,X,102,103,101,102,10
2026-01-01T00:02:00Z,X,101,104,100,103,10
2026-01-01T00:03:00Z,X,105,106,104,105,10
2026-01-01T00:04:00Z,X,104,105,98,99,10
`

// Events: 0 X@0, 1 Y@0, 2 X@1, 3 Y@1, 4 X@2, 5 Y@2.
const twoSymbolCSV = `timestamp,symbol,open,high,low,close,volume
2026-01-01T00:00:00Z,X,100,101,99,100,10
2026-01-01T00:00:00Z,Y,50,51,49,50,10
2026-01-01T00:01:00Z,X,102,103,101,102,10
2026-01-01T00:01:00Z,Y,52,53,51,52,10
2026-01-01T00:02:00Z,X,101,104,100,103,10
2026-01-01T00:02:00Z,Y,51,54,50,53,10
`

type script map[int]func(w *scriptWorker) []contract.Command

func cmds(c ...contract.Command) []contract.Command { return c }

// wantExec is an expected execution; zero Cash and Position are not checked.
type wantExec struct {
	id       int64
	status   string
	side     string
	symbol   string
	qty      float64
	price    float64
	fee      float64
	event    int
	reason   string
	cash     float64
	position float64
}

func (e wantExec) String() string {
	return fmt.Sprintf("#%d %s %s %s qty=%v price=%v fee=%v event=%d cash=%v pos=%v reason=%q",
		e.id, e.status, e.side, e.symbol, e.qty, e.price, e.fee, e.event, e.cash, e.position, e.reason)
}

func fromExecution(x contract.Execution) wantExec {
	return wantExec{x.OrderID, string(x.Status), string(x.Side), x.Symbol, x.Qty, x.Price, x.Fee, x.Event, x.Reason, x.Cash, x.Position}
}

func (e wantExec) matches(got wantExec) bool {
	return e.id == got.id && e.status == got.status && e.side == got.side && e.symbol == got.symbol &&
		closeEnough(e.qty, got.qty) && closeEnough(e.price, got.price) && closeEnough(e.fee, got.fee) &&
		e.event == got.event && e.reason == got.reason &&
		(e.cash == 0 || closeEnough(e.cash, got.cash)) && (e.position == 0 || closeEnough(e.position, got.position))
}

const noShort = " (short selling needs --allow-short)"

func TestFillModel(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name       string
		data       string
		opts       Options
		onData     script
		onExec     func(w *scriptWorker, x contract.Execution) []contract.Command
		want       []wantExec
		timeline   string // when set, the expected order of hook calls
		wantCash   float64
		wantPos    map[string]float64
		wantEquity float64
		check      func(t *testing.T, m contract.Metrics)
	}{
		{
			name:   "market buy fills at the next open",
			onData: script{0: func(w *scriptWorker) []contract.Command { return cmds(w.order("buy", "X", 10)) }},
			want:   []wantExec{{id: 1, status: "filled", side: "buy", symbol: "X", qty: 10, price: 102, event: 1, cash: 98980, position: 10}},
			// The fill is delivered before on_data of the bar it happened at.
			timeline: "d 0, x filled #1, d 1, d 2, d 3, d 4",
			wantCash: 98980, wantPos: map[string]float64{"X": 10}, wantEquity: 98980 + 10*99,
		},
		{
			name: "fees and slippage on market orders",
			opts: Options{FeeBps: 10, SlippageBps: 100},
			onData: script{
				0: func(w *scriptWorker) []contract.Command { return cmds(w.order("buy", "X", 10)) },
				2: func(w *scriptWorker) []contract.Command { return cmds(w.order("sell", "X", 10)) },
			},
			// Buy at 102*1.01 = 103.02, fee 1030.2*0.001; sell at 105*0.99 = 103.95, fee 1039.5*0.001.
			want: []wantExec{
				{id: 1, status: "filled", side: "buy", symbol: "X", qty: 10, price: 103.02, fee: 1.0302, event: 1, cash: 98968.7698, position: 10},
				{id: 2, status: "filled", side: "sell", symbol: "X", qty: 10, price: 103.95, fee: 1.0395, event: 3, cash: 100007.2303},
			},
			wantCash: 100007.2303, wantPos: map[string]float64{}, wantEquity: 100007.2303,
			check: func(t *testing.T, m contract.Metrics) {
				// One round trip: gross (103.95-103.02)*10 = 9.3, net 9.3-2.0697.
				if m.Trades != 1 || m.WinRate != 1 || !closeEnough(m.Fees, 2.0697) || !closeEnough(m.Expectancy, 7.2303) {
					t.Errorf("trades=%d win_rate=%v fees=%v expectancy=%v", m.Trades, m.WinRate, m.Fees, m.Expectancy)
				}
			},
		},
		{
			// 0.1 + 0.2 is 0.30000000000000004 in binary floating point: the
			// sell of 0.3 closes the position exactly, with no residue.
			name: "fractional quantities close to exactly zero",
			onData: script{
				0: func(w *scriptWorker) []contract.Command { return cmds(w.order("buy", "X", 0.1)) },
				1: func(w *scriptWorker) []contract.Command { return cmds(w.order("buy", "X", 0.2)) },
				2: func(w *scriptWorker) []contract.Command { return cmds(w.order("sell", "X", 0.3)) },
			},
			want: []wantExec{
				{id: 1, status: "filled", side: "buy", symbol: "X", qty: 0.1, price: 102, event: 1},
				{id: 2, status: "filled", side: "buy", symbol: "X", qty: 0.2, price: 101, event: 2},
				{id: 3, status: "filled", side: "sell", symbol: "X", qty: 0.3, price: 105, event: 3},
			},
			wantCash: 100000 - 10.2 - 20.2 + 31.5, wantPos: map[string]float64{}, wantEquity: 100000 - 10.2 - 20.2 + 31.5,
			check: func(t *testing.T, m contract.Metrics) {
				if m.Trades != 2 || m.Exposure >= 1 {
					t.Errorf("trades=%d exposure=%v", m.Trades, m.Exposure)
				}
			},
		},
		{
			name: "selling a fractional position in parts",
			onData: script{
				0: func(w *scriptWorker) []contract.Command { return cmds(w.order("buy", "X", 0.3)) },
				1: func(w *scriptWorker) []contract.Command { return cmds(w.order("sell", "X", 0.1)) },
				2: func(w *scriptWorker) []contract.Command { return cmds(w.order("sell", "X", 0.2)) },
			},
			want: []wantExec{
				{id: 1, status: "filled", side: "buy", symbol: "X", qty: 0.3, price: 102, event: 1},
				{id: 2, status: "filled", side: "sell", symbol: "X", qty: 0.1, price: 101, event: 2},
				{id: 3, status: "filled", side: "sell", symbol: "X", qty: 0.2, price: 105, event: 3, position: 0},
			},
			wantCash: 100000 - 30.6 + 10.1 + 21, wantPos: map[string]float64{}, wantEquity: 100000 - 30.6 + 10.1 + 21,
		},
		{
			name:     "limit buy waits for a bar that trades through and fills at the limit",
			onData:   script{0: func(w *scriptWorker) []contract.Command { return cmds(w.order("buy", "X", 10, 100.5)) }},
			want:     []wantExec{{id: 1, status: "filled", side: "buy", symbol: "X", qty: 10, price: 100.5, event: 2, cash: 98995, position: 10}},
			wantCash: 98995, wantPos: map[string]float64{"X": 10}, wantEquity: 98995 + 990,
		},
		{
			name:     "limit buy above the open fills at the open",
			onData:   script{0: func(w *scriptWorker) []contract.Command { return cmds(w.order("buy", "X", 10, 103)) }},
			want:     []wantExec{{id: 1, status: "filled", side: "buy", symbol: "X", qty: 10, price: 102, event: 1}},
			wantCash: 98980, wantPos: map[string]float64{"X": 10}, wantEquity: 98980 + 990,
		},
		{
			name: "limit sells fill at the better of open and limit",
			onData: script{
				0: func(w *scriptWorker) []contract.Command { return cmds(w.order("buy", "X", 10)) },
				1: func(w *scriptWorker) []contract.Command { return cmds(w.order("sell", "X", 4, 105.5)) },
				2: func(w *scriptWorker) []contract.Command { return cmds(w.order("sell", "X", 6, 104.5)) },
			},
			// Bar 3 opens at 105 with high 106: #2 at its limit 105.5, #3 at the open 105.
			want: []wantExec{
				{id: 1, status: "filled", side: "buy", symbol: "X", qty: 10, price: 102, event: 1},
				{id: 2, status: "filled", side: "sell", symbol: "X", qty: 4, price: 105.5, event: 3, cash: 98980 + 422, position: 6},
				{id: 3, status: "filled", side: "sell", symbol: "X", qty: 6, price: 105, event: 3, cash: 98980 + 422 + 630},
			},
			wantCash: 100032, wantPos: map[string]float64{}, wantEquity: 100032,
			check: func(t *testing.T, m contract.Metrics) {
				// FIFO: the 10-share lot closes in two trades, +14 and +18.
				if m.Trades != 2 || m.WinRate != 1 || !closeEnough(m.Expectancy, 16) || m.ProfitFactor != 0 {
					t.Errorf("trades=%d win_rate=%v expectancy=%v profit_factor=%v", m.Trades, m.WinRate, m.Expectancy, m.ProfitFactor)
				}
			},
		},
		{
			name:     "buy costing more than the cash is rejected at fill time",
			opts:     Options{Cash: 1000},
			onData:   script{0: func(w *scriptWorker) []contract.Command { return cmds(w.order("buy", "X", 10)) }},
			want:     []wantExec{{id: 1, status: "rejected", side: "buy", symbol: "X", qty: 10, event: 1, reason: "insufficient cash: need 1020, have 1000", cash: 1000}},
			wantCash: 1000, wantPos: map[string]float64{}, wantEquity: 1000,
		},
		{
			name:     "fee counts towards the cash needed",
			opts:     Options{Cash: 1020, FeeBps: 1},
			onData:   script{0: func(w *scriptWorker) []contract.Command { return cmds(w.order("buy", "X", 10)) }},
			want:     []wantExec{{id: 1, status: "rejected", side: "buy", symbol: "X", qty: 10, event: 1, reason: "insufficient cash: need 1020.102, have 1020"}},
			wantCash: 1020, wantPos: map[string]float64{}, wantEquity: 1020,
		},
		{
			name:     "buy costing exactly the cash fills",
			opts:     Options{Cash: 1020},
			onData:   script{0: func(w *scriptWorker) []contract.Command { return cmds(w.order("buy", "X", 10)) }},
			want:     []wantExec{{id: 1, status: "filled", side: "buy", symbol: "X", qty: 10, price: 102, event: 1}},
			wantCash: 0, wantPos: map[string]float64{"X": 10}, wantEquity: 990,
		},
		{
			name: "fills at one bar go in submission order, each checked against the cash left",
			opts: Options{Cash: 2500},
			onData: script{0: func(w *scriptWorker) []contract.Command {
				return cmds(w.order("buy", "X", 10), w.order("buy", "X", 10), w.order("buy", "X", 10))
			}},
			want: []wantExec{
				{id: 1, status: "filled", side: "buy", symbol: "X", qty: 10, price: 102, event: 1, cash: 1480},
				{id: 2, status: "filled", side: "buy", symbol: "X", qty: 10, price: 102, event: 1, cash: 460},
				{id: 3, status: "rejected", side: "buy", symbol: "X", qty: 10, event: 1, reason: "insufficient cash: need 1020, have 460"},
			},
			wantCash: 460, wantPos: map[string]float64{"X": 20}, wantEquity: 460 + 20*99,
		},
		{
			name:     "sell beyond the position is rejected",
			onData:   script{0: func(w *scriptWorker) []contract.Command { return cmds(w.order("sell", "X", 5)) }},
			want:     []wantExec{{id: 1, status: "rejected", side: "sell", symbol: "X", qty: 5, event: 1, reason: "insufficient position: selling 5, holding 0" + noShort}},
			wantCash: 100000, wantPos: map[string]float64{}, wantEquity: 100000,
		},
		{
			name: "allow-short opens and covers a short",
			opts: Options{AllowShort: true},
			onData: script{
				0: func(w *scriptWorker) []contract.Command { return cmds(w.order("sell", "X", 5)) },
				3: func(w *scriptWorker) []contract.Command { return cmds(w.order("buy", "X", 5)) },
			},
			want: []wantExec{
				{id: 1, status: "filled", side: "sell", symbol: "X", qty: 5, price: 102, event: 1, cash: 100510, position: -5},
				{id: 2, status: "filled", side: "buy", symbol: "X", qty: 5, price: 104, event: 4, cash: 99990},
			},
			wantCash: 99990, wantPos: map[string]float64{}, wantEquity: 99990,
			check: func(t *testing.T, m contract.Metrics) {
				// A short round trip from 102 to 104: -10.
				if m.Trades != 1 || m.WinRate != 0 || m.Expectancy != -10 || m.ProfitFactor != 0 {
					t.Errorf("trades=%d win_rate=%v expectancy=%v profit_factor=%v", m.Trades, m.WinRate, m.Expectancy, m.ProfitFactor)
				}
			},
		},
		{
			name: "submit-time rejections come before the next bar's fills",
			onData: script{0: func(w *scriptWorker) []contract.Command {
				return cmds(w.order("buy", "X", 10), w.order("buy", "NOPE", 1))
			}},
			want: []wantExec{
				{id: 2, status: "rejected", side: "buy", symbol: "NOPE", qty: 1, event: 0, reason: `unknown symbol "NOPE"`, cash: 100000},
				{id: 1, status: "filled", side: "buy", symbol: "X", qty: 10, price: 102, event: 1},
			},
			timeline: "d 0, x rejected #2, x filled #1, d 1, d 2, d 3, d 4",
			wantCash: 98980, wantPos: map[string]float64{"X": 10}, wantEquity: 98980 + 990,
		},
		{
			name: "invalid quantities and limits are rejected at submit",
			onData: script{1: func(w *scriptWorker) []contract.Command {
				return cmds(w.order("buy", "X", 0), w.order("sell", "X", -1), w.order("buy", "X", nan),
					w.order("buy", "X", inf), w.order("buy", "X", 1, -1), w.order("sell", "X", 1, nan),
					contract.Command{Op: "hold", OrderID: 99, Symbol: "X", Qty: 1})
			}},
			want: []wantExec{
				{id: 1, status: "rejected", side: "buy", symbol: "X", qty: 0, event: 1, reason: "invalid qty 0: must be a finite number > 0"},
				{id: 2, status: "rejected", side: "sell", symbol: "X", qty: -1, event: 1, reason: "invalid qty -1: must be a finite number > 0"},
				{id: 3, status: "rejected", side: "buy", symbol: "X", qty: nan, event: 1, reason: "invalid qty NaN: must be a finite number > 0"},
				{id: 4, status: "rejected", side: "buy", symbol: "X", qty: inf, event: 1, reason: "invalid qty +Inf: must be a finite number > 0"},
				{id: 5, status: "rejected", side: "buy", symbol: "X", qty: 1, event: 1, reason: "invalid limit price -1: must be a finite number > 0"},
				{id: 6, status: "rejected", side: "sell", symbol: "X", qty: 1, event: 1, reason: "invalid limit price NaN: must be a finite number > 0"},
				{id: 99, status: "rejected", symbol: "X", qty: 1, event: 1, reason: `unknown command "hold"`},
			},
			wantCash: 100000, wantPos: map[string]float64{}, wantEquity: 100000,
		},
		{
			name: "duplicate order ids are rejected",
			onData: script{0: func(w *scriptWorker) []contract.Command {
				c := w.order("buy", "X", 1, 50)
				return cmds(c, c)
			}},
			want:     []wantExec{{id: 1, status: "rejected", side: "buy", symbol: "X", qty: 1, event: 0, reason: "duplicate order id 1"}},
			wantCash: 100000, wantPos: map[string]float64{}, wantEquity: 100000,
			check: func(t *testing.T, m contract.Metrics) {
				if m.OpenOrders != 1 {
					t.Errorf("open_orders = %d, want 1", m.OpenOrders)
				}
			},
		},
		{
			name: "cancel of an open order",
			onData: script{
				0: func(w *scriptWorker) []contract.Command { return cmds(w.order("buy", "X", 10, 90)) },
				1: func(w *scriptWorker) []contract.Command { return cmds(w.cancel(1)) },
			},
			want:     []wantExec{{id: 1, status: "canceled", side: "buy", symbol: "X", qty: 10, event: 1}},
			timeline: "d 0, d 1, x canceled #1, d 2, d 3, d 4",
			wantCash: 100000, wantPos: map[string]float64{}, wantEquity: 100000,
			check: func(t *testing.T, m contract.Metrics) {
				if m.Cancels != 1 || m.OpenOrders != 0 || m.Rejections != 0 {
					t.Errorf("cancels=%d open_orders=%d rejections=%d", m.Cancels, m.OpenOrders, m.Rejections)
				}
			},
		},
		{
			name: "cancel takes effect before the bar that would have filled the order",
			onData: script{
				0: func(w *scriptWorker) []contract.Command { return cmds(w.order("buy", "X", 10, 100.5)) },
				1: func(w *scriptWorker) []contract.Command { return cmds(w.cancel(1)) },
			},
			want:     []wantExec{{id: 1, status: "canceled", side: "buy", symbol: "X", qty: 10, event: 1}},
			wantCash: 100000, wantPos: map[string]float64{}, wantEquity: 100000,
		},
		{
			name:     "cancel of an unknown order is rejected",
			onData:   script{0: func(w *scriptWorker) []contract.Command { return cmds(w.cancel(99)) }},
			want:     []wantExec{{id: 99, status: "rejected", event: 0, reason: "cancel: no order 99"}},
			wantCash: 100000, wantPos: map[string]float64{}, wantEquity: 100000,
		},
		{
			name: "cancel of a filled, rejected or canceled order is rejected",
			onData: script{
				0: func(w *scriptWorker) []contract.Command {
					return cmds(w.order("buy", "X", 10), w.order("sell", "X", 100), w.order("buy", "X", 1, 1), w.order("buy", "NOPE", 1))
				},
				1: func(w *scriptWorker) []contract.Command { return cmds(w.cancel(3)) },
				2: func(w *scriptWorker) []contract.Command {
					return cmds(w.cancel(1), w.cancel(2), w.cancel(3), w.cancel(4))
				},
			},
			want: []wantExec{
				{id: 4, status: "rejected", side: "buy", symbol: "NOPE", qty: 1, event: 0, reason: `unknown symbol "NOPE"`},
				{id: 1, status: "filled", side: "buy", symbol: "X", qty: 10, price: 102, event: 1},
				{id: 2, status: "rejected", side: "sell", symbol: "X", qty: 100, event: 1, reason: "insufficient position: selling 100, holding 10" + noShort},
				{id: 3, status: "canceled", side: "buy", symbol: "X", qty: 1, event: 1},
				{id: 1, status: "rejected", side: "buy", symbol: "X", qty: 10, event: 2, reason: "cancel: order 1 already filled"},
				{id: 2, status: "rejected", side: "sell", symbol: "X", qty: 100, event: 2, reason: "cancel: order 2 already rejected"},
				{id: 3, status: "rejected", side: "buy", symbol: "X", qty: 1, event: 2, reason: "cancel: order 3 already canceled"},
				{id: 4, status: "rejected", side: "buy", symbol: "NOPE", qty: 1, event: 2, reason: "cancel: order 4 already rejected"},
			},
			wantCash: 98980, wantPos: map[string]float64{"X": 10}, wantEquity: 98980 + 990,
		},
		{
			name:   "orders placed in on_execution fill after the bar of the execution",
			onData: script{0: func(w *scriptWorker) []contract.Command { return cmds(w.order("buy", "X", 10)) }},
			onExec: func(w *scriptWorker, x contract.Execution) []contract.Command {
				if x.Status == "filled" && x.Side == "buy" {
					return cmds(w.order("sell", "X", x.Qty))
				}
				return nil
			},
			want: []wantExec{
				{id: 1, status: "filled", side: "buy", symbol: "X", qty: 10, price: 102, event: 1},
				{id: 2, status: "filled", side: "sell", symbol: "X", qty: 10, price: 101, event: 2, cash: 99990},
			},
			timeline: "d 0, x filled #1, d 1, x filled #2, d 2, d 3, d 4",
			wantCash: 99990, wantPos: map[string]float64{}, wantEquity: 99990,
		},
		{
			name: "rejections from on_execution are delivered before the bar's on_data",
			onData: script{0: func(w *scriptWorker) []contract.Command {
				return cmds(w.order("buy", "X", 1), w.order("buy", "X", 1))
			}},
			onExec: func(w *scriptWorker, x contract.Execution) []contract.Command {
				if x.Status == "filled" && x.OrderID == 1 {
					return cmds(w.order("buy", "NOPE", 1))
				}
				return nil
			},
			want: []wantExec{
				{id: 1, status: "filled", side: "buy", symbol: "X", qty: 1, price: 102, event: 1},
				{id: 2, status: "filled", side: "buy", symbol: "X", qty: 1, price: 102, event: 1},
				{id: 3, status: "rejected", side: "buy", symbol: "NOPE", qty: 1, event: 1, reason: `unknown symbol "NOPE"`},
			},
			timeline: "d 0, x filled #1, x filled #2, x rejected #3, d 1, d 2, d 3, d 4",
			wantCash: 100000 - 204, wantPos: map[string]float64{"X": 2}, wantEquity: 100000 - 204 + 2*99,
		},
		{
			name: "an order for another symbol fills at its next bar with a later timestamp",
			data: twoSymbolCSV,
			// Event 1 is Y at the same minute as event 0: too early.
			onData:   script{0: func(w *scriptWorker) []contract.Command { return cmds(w.order("buy", "Y", 10)) }},
			want:     []wantExec{{id: 1, status: "filled", side: "buy", symbol: "Y", qty: 10, price: 52, event: 3}},
			wantCash: 99480, wantPos: map[string]float64{"Y": 10}, wantEquity: 99480 + 530,
		},
		{
			name: "orders placed at the last event stay open; its rejections are still delivered",
			onData: script{4: func(w *scriptWorker) []contract.Command {
				return cmds(w.order("buy", "X", 1), w.order("buy", "X", -1))
			}},
			want:     []wantExec{{id: 2, status: "rejected", side: "buy", symbol: "X", qty: -1, event: 4, reason: "invalid qty -1: must be a finite number > 0"}},
			timeline: "d 0, d 1, d 2, d 3, d 4, x rejected #2",
			wantCash: 100000, wantPos: map[string]float64{}, wantEquity: 100000,
			check: func(t *testing.T, m contract.Metrics) {
				if m.OpenOrders != 1 || m.WarmupBars != 4 || m.Fills != 0 || m.Rejections != 1 {
					t.Errorf("open_orders=%d warmup_bars=%d fills=%d rejections=%d", m.OpenOrders, m.WarmupBars, m.Fills, m.Rejections)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := tc.data
			if text == "" {
				text = oneSymbolCSV
			}
			opts := tc.opts
			if opts.Cash == 0 {
				opts.Cash = 100_000
			}
			drv := mustDriver(t, mustParse(t, "bars.csv", text), opts)
			w := newScriptWorker(t, drv)
			w.onData = func(w *scriptWorker, ev barEvent) []contract.Command {
				if f := tc.onData[ev.Event]; f != nil {
					return f(w)
				}
				return nil
			}
			w.onExec = tc.onExec
			if err := drv.Drive(context.Background(), w, newMemRecords()); err != nil {
				t.Fatalf("Drive: %v", err)
			}
			var got []wantExec
			for _, x := range w.execs {
				got = append(got, fromExecution(x))
			}
			ok := len(got) == len(tc.want)
			for i := 0; ok && i < len(got); i++ {
				ok = tc.want[i].matches(got[i])
			}
			if !ok {
				t.Errorf("executions:\ngot  %v\nwant %v", got, tc.want)
			}
			if tc.timeline != "" {
				if tl := strings.Join(w.timeline, ", "); tl != tc.timeline {
					t.Errorf("timeline:\ngot  %s\nwant %s", tl, tc.timeline)
				}
			}
			m := drv.Outcome().Metrics
			if !closeEnough(m.FinalCash, tc.wantCash) || !closeEnough(m.FinalEquity, tc.wantEquity) {
				t.Errorf("final cash %v equity %v, want %v and %v", m.FinalCash, m.FinalEquity, tc.wantCash, tc.wantEquity)
			}
			if !reflect.DeepEqual(m.Positions, tc.wantPos) {
				t.Errorf("positions %v, want %v", m.Positions, tc.wantPos)
			}
			// The worker's view of the portfolio follows the executions.
			if !closeEnough(w.cash, m.FinalCash) {
				t.Errorf("worker cash %v, driver cash %v", w.cash, m.FinalCash)
			}
			if tc.check != nil {
				tc.check(t, m)
			}
		})
	}
}

// A strategy that orders on every bar exercises the yield and resume path
// at every bar; the fills must come out the same as computed by hand.
func TestDriverBatchCuts(t *testing.T) {
	data := mustParse(t, "bars.csv", oneSymbolCSV)
	tests := []struct {
		name    string
		onData  script
		batches []batchShape
	}{
		{
			name:    "no orders: one batch",
			batches: []batchShape{{0, 0, 5}},
		},
		{
			// The yield after bar 0 ends the first batch; the next starts with the fill.
			name:    "market order",
			onData:  script{0: func(w *scriptWorker) []contract.Command { return cmds(w.order("buy", "X", 1)) }},
			batches: []batchShape{{0, 0, 5}, {1, 1, 4}},
		},
		{
			// The limit fills at bar 2 (low 100): the batch after the order stops before it.
			name:    "limit order",
			onData:  script{0: func(w *scriptWorker) []contract.Command { return cmds(w.order("buy", "X", 1, 100.5)) }},
			batches: []batchShape{{0, 0, 5}, {1, 0, 1}, {2, 1, 3}},
		},
		{
			// A limit that never fills does not cut batches.
			name:    "limit order that never fills",
			onData:  script{0: func(w *scriptWorker) []contract.Command { return cmds(w.order("buy", "X", 1, 50)) }},
			batches: []batchShape{{0, 0, 5}, {1, 0, 4}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			drv := mustDriver(t, data, DefaultOptions())
			w := newScriptWorker(t, drv)
			w.onData = func(w *scriptWorker, ev barEvent) []contract.Command {
				if f := tc.onData[ev.Event]; f != nil {
					return f(w)
				}
				return nil
			}
			if err := drv.Drive(context.Background(), w, newMemRecords()); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(w.batches, tc.batches) {
				t.Errorf("batches %v, want %v", w.batches, tc.batches)
			}
			if want := []int{0, 1, 2, 3, 4}; !reflect.DeepEqual(w.events, want) {
				t.Errorf("on_data events %v, want %v", w.events, want)
			}
		})
	}
}

func TestDriverBatchLimits(t *testing.T) {
	set := sample(t, data.Window{})
	drv := mustDriver(t, set, DefaultOptions())
	drv.maxBars, drv.maxExecs = 1000, 3
	w := newScriptWorker(t, drv)
	w.onData = func(w *scriptWorker, ev barEvent) []contract.Command {
		if ev.Event == 10 {
			var c []contract.Command
			for range 7 {
				c = append(c, w.order("buy", "NOPE", 1))
			}
			return c
		}
		return nil
	}
	if err := drv.Drive(context.Background(), w, newMemRecords()); err != nil {
		t.Fatal(err)
	}
	n := int(set.Info().Events)
	if len(w.events) != n {
		t.Fatalf("on_data ran %d times, want %d", len(w.events), n)
	}
	if len(w.execs) != 7 {
		t.Fatalf("%d executions, want 7", len(w.execs))
	}
	for _, b := range w.batches {
		if b.bars > 1000 || b.execs > 3 || (b.execs > 0 && b.bars > 0 && b.first != 11) {
			t.Errorf("batch %+v breaks the limits", b)
		}
	}
	// The 7 rejections go 3, 3, then 1 with the bars from event 11 on.
	var withExecs []batchShape
	for _, b := range w.batches {
		if b.execs > 0 {
			withExecs = append(withExecs, b)
		}
	}
	if len(withExecs) != 3 || withExecs[0] != (batchShape{11, 3, 0}) || withExecs[1] != (batchShape{11, 3, 0}) ||
		withExecs[2].first != 11 || withExecs[2].execs != 1 || withExecs[2].bars == 0 {
		t.Errorf("batches with executions %v, want {11 3 0} {11 3 0} {11 1 >0}", withExecs)
	}
}

func TestDriverStop(t *testing.T) {
	drv := mustDriver(t, mustParse(t, "bars.csv", oneSymbolCSV), DefaultOptions())
	w := newScriptWorker(t, drv)
	w.stopAt = 2
	w.onData = func(w *scriptWorker, ev barEvent) []contract.Command {
		if ev.Event == 0 || ev.Event == 2 {
			return cmds(w.order("buy", "X", 1))
		}
		return nil
	}
	rec := newMemRecords()
	err := drv.Drive(context.Background(), w, rec)
	if !errors.Is(err, contract.ErrStopped) {
		t.Fatalf("Drive = %v, want ErrStopped", err)
	}
	out := drv.Outcome()
	m := out.Metrics
	// Bars 0-2 ran; the order from the stopping hook was taken in but never fills.
	if m.Events != 3 || m.Fills != 1 || m.OpenOrders != 1 {
		t.Errorf("events=%d fills=%d open_orders=%d, want 3, 1, 1", m.Events, m.Fills, m.OpenOrders)
	}
	orders := rec[ordersFile]
	if got := strings.Count(orders.String(), "\norder,"); got != 2 {
		t.Errorf("orders.csv has %d orders, want 2:\n%s", got, orders.String())
	}
}

type failingWorker struct{ scriptWorker }

func (w *failingWorker) Run(ctx context.Context, b *contract.Batch) (contract.Yield, error) {
	return contract.Yield{}, &contract.Failure{Kind: contract.KindException, Hook: contract.HookOnData, Message: "boom"}
}

func TestDriverReturnsWorkerError(t *testing.T) {
	drv := mustDriver(t, mustParse(t, "bars.csv", oneSymbolCSV), DefaultOptions())
	err := drv.Drive(context.Background(), &failingWorker{}, newMemRecords())
	var f *contract.Failure
	if !errors.As(err, &f) || f.Message != "boom" {
		t.Fatalf("Drive = %v, want the worker's failure", err)
	}
	// Outcome still works and covers nothing.
	if m := drv.Outcome().Metrics; m.Events != 0 || m.FinalEquity != 100_000 {
		t.Errorf("events=%d final_equity=%v", m.Events, m.FinalEquity)
	}
}

// failAtWorker fails in on_data at event at, inside a batch: the bars of
// the batch before it ran (they issued no command).
type failAtWorker struct {
	scriptWorker
	at int
}

func (w *failAtWorker) Run(ctx context.Context, b *contract.Batch) (contract.Yield, error) {
	if b.FirstEvent+b.Bars.Len() <= w.at {
		return contract.Yield{Executions: len(b.Executions), Bars: b.Bars.Len()}, nil
	}
	at := w.at
	return contract.Yield{}, &contract.Failure{Kind: contract.KindException, Hook: contract.HookOnData, Message: "boom", EventIndex: &at}
}

// TestFailedRunMetricsCoverWhatRan: the metrics of a run that failed in the
// middle of a batch count the events before the failing one, not only
// those of the batches before it.
func TestFailedRunMetricsCoverWhatRan(t *testing.T) {
	data := mustParse(t, "bars.csv", manyBarsCSV(300))
	for _, at := range []int{1, 58, 200} {
		drv := mustDriver(t, data, DefaultOptions())
		w := &failAtWorker{at: at}
		if err := drv.Drive(context.Background(), w, newMemRecords()); err == nil {
			t.Fatal("Drive passed")
		}
		if m := drv.Outcome().Metrics; m.Events != at {
			t.Errorf("failure at event %d: metrics.events %d", at, m.Events)
		}
	}
}

// manyBarsCSV is n one-minute bars of one symbol.
func manyBarsCSV(n int) string {
	var b strings.Builder
	b.WriteString("timestamp,symbol,open,high,low,close,volume\n")
	for i := range n {
		fmt.Fprintf(&b, "%d,AAA,100,101,99,100,10\n", 1767225600+60*i)
	}
	return b.String()
}

type badYieldWorker struct{ y contract.Yield }

func (w *badYieldWorker) Manifest() contract.Manifest { return contract.Manifest{} }
func (w *badYieldWorker) Run(ctx context.Context, b *contract.Batch) (contract.Yield, error) {
	return w.y, nil
}

func TestDriverRejectsBadYield(t *testing.T) {
	for _, tc := range []struct {
		y    contract.Yield
		want string
	}{
		{contract.Yield{}, "backtest: worker yielded without progress"},
		{contract.Yield{Bars: 6}, "backtest: worker yielded 0 executions and 6 bars of a batch of 0 and 5"},
		{contract.Yield{Executions: 1}, "backtest: worker yielded 1 executions and 0 bars of a batch of 0 and 5"},
	} {
		drv := mustDriver(t, mustParse(t, "bars.csv", oneSymbolCSV), DefaultOptions())
		err := drv.Drive(context.Background(), &badYieldWorker{tc.y}, newMemRecords())
		if err == nil || err.Error() != tc.want {
			t.Errorf("yield %+v: Drive = %v, want %q", tc.y, err, tc.want)
		}
	}
}

func TestDriverContextCanceled(t *testing.T) {
	drv := mustDriver(t, mustParse(t, "bars.csv", oneSymbolCSV), DefaultOptions())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := drv.Drive(ctx, newScriptWorker(t, drv), newMemRecords()); !errors.Is(err, context.Canceled) {
		t.Fatalf("Drive = %v, want context.Canceled", err)
	}
}

func TestNewDriverErrors(t *testing.T) {
	set := mustParse(t, "bars.csv", oneSymbolCSV)
	// Each refusal names the option's field, not a flag (the command line
	// names its flag).
	for _, tc := range []struct {
		opts   Options
		option string
		msg    string
	}{
		{Options{Cash: 0}, OptionCash, "must be a finite number > 0, got 0"},
		{Options{Cash: math.NaN()}, OptionCash, "must be a finite number > 0, got NaN"},
		{Options{Cash: 1, FeeBps: -1}, OptionFeeBps, "must be a finite number >= 0, got -1"},
		{Options{Cash: 1, SlippageBps: 10000}, OptionSlippageBps, "must be >= 0 and below 10000, got 10000"},
	} {
		_, err := NewDriver(set, tc.opts)
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Option != tc.option || oe.Msg != tc.msg || strings.Contains(err.Error(), "--") {
			t.Errorf("NewDriver(%+v) = %v, want an *OptionError of %s: %q", tc.opts, err, tc.option, tc.msg)
		}
	}
	// A window without bars is refused when the data is opened.
	late, _ := data.ParseTime("2027-01-01T00:00:00Z")
	_, err := openText(t, "bars.csv", oneSymbolCSV, data.Window{From: late})
	want := "read bars bars.csv: no bars in the window 2027-01-01T00:00:00Z..-: the data covers 2026-01-01T00:00:00Z to 2026-01-01T00:04:00Z"
	if err == nil || !strings.HasSuffix(err.Error(), want[len("read bars bars.csv"):]) {
		t.Errorf("empty window: %v, want %s", err, want)
	}
}

func TestDriverWindow(t *testing.T) {
	w, err := data.ParseWindow("2026-01-01 00:01:00", "2026-01-01T00:02:00Z")
	if err != nil {
		t.Fatal(err)
	}
	set, err := openText(t, "bars.csv", twoSymbolCSV, w)
	if err != nil {
		t.Fatal(err)
	}
	drv, err := NewDriver(set, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	s := drv.Setup()
	if s.Data.Events != 4 || s.Data.From != "2026-01-01T00:01:00Z" || s.Data.To != "2026-01-01T00:02:00Z" {
		t.Errorf("setup data %+v", s.Data)
	}
	want := "cash=100000 fee_bps=0 slippage_bps=0 allow_short=false window=2026-01-01T00:01:00Z..2026-01-01T00:02:00Z"
	if s.Flags != want {
		t.Errorf("flags %q, want %q", s.Flags, want)
	}
	whole, _ := NewDriver(mustParse(t, "bars.csv", twoSymbolCSV), DefaultOptions())
	hash := drv.Outcome().DataHash
	if hash == whole.Outcome().DataHash || len(hash) != 64 {
		t.Errorf("window data hash %q should differ from the whole data's", hash)
	}
	drv, _ = NewDriver(set, DefaultOptions())
	sw := newScriptWorker(t, drv)
	if err := drv.Drive(context.Background(), sw, newMemRecords()); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sw.events, []int{0, 1, 2, 3}) {
		t.Errorf("events %v", sw.events)
	}
}
