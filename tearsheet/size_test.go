package tearsheet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"stratbench/contract"
	"stratbench/job"
	"stratbench/metrics"
	"stratbench/sweep"
)

// TestSweepReportSizeBound: the report of a 10,000-run sweep is under
// 10 MB (docs/report.md) whatever its runs' messages: every run failed with
// a message of 500 '<' (the most LoadSweep keeps, each '<' six bytes in
// the page's JSON), with five best curves of 20,000 points. The first
// fullMessages messages are whole, the others cut.
func TestSweepReportSizeBound(t *testing.T) {
	const n = 10_000
	grid := sweep.Grid{{Name: "fast"}, {Name: "slow"}}
	for i := range 100 {
		grid[0].Values = append(grid[0].Values, int64(i+1))
		grid[1].Values = append(grid[1].Values, int64(i+10))
	}
	doc := &sweep.Document{SweepID: "sw-20261206-000000.000-size", Status: sweep.StatusFailed,
		Spec: sweep.SpecDoc{Grid: grid, Params: sweep.Params{}, Metric: "sharpe", Jobs: 2}, StartedAt: time.Now()}
	s := &Sweep{Doc: doc, Messages: map[string]string{}}
	message := strings.Repeat("<", maxMessage)
	for i := range n {
		r := sweep.Result{Index: int64(i), Params: sweep.Params{{Name: "fast", Value: int64(i/100 + 1)}, {Name: "slow", Value: int64(i%100 + 10)}},
			JobID: fmt.Sprintf("20261206-000000.000-%04x", i), Status: sweep.RunFailed, FailureKind: "exception", DurationMS: 312}
		s.Messages[r.JobID] = message
		doc.Runs = append(doc.Runs, r)
	}
	doc.Retally(doc.Runs)
	rng := rand.New(rand.NewPCG(1, 2))
	for k := range maxBestCurves {
		var c metrics.Curve
		v := 100000.0
		for i := range 20_000 {
			v *= 1 + rng.NormFloat64()*0.001
			c.Times = append(c.Times, int64(1704067200+i*60)*1e9)
			c.Equity = append(c.Equity, v)
		}
		s.Best = append(s.Best, RunCurve{Index: int64(k), Params: "fast=1, slow=10", Curve: c})
	}
	_, data := s.view("test")
	msgCol := len(data.Params) + len(data.Columns) - 2
	for i, row := range data.Rows {
		want := maxShortMessage
		if i < fullMessages {
			want = maxMessage
		}
		if got := strings.Count(row[msgCol].(string), "<"); got != want {
			t.Errorf("run %d's message has %d characters of %d, want %d", i, got, maxMessage, want)
			break
		}
	}
	var buf bytes.Buffer
	if err := WriteSweep(&buf, s, Options{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	t.Logf("10,000 failed runs, every message 500 '<': %d bytes", buf.Len())
	if buf.Len() > 10e6 {
		t.Errorf("the report of a 10,000-run sweep is %.2f MB, over 10 MB", float64(buf.Len())/1e6)
	}
}

// TestJobReportSizeBound: the report of a 1,000,000-bar job is under 5 MB
// (docs/report.md) whatever the job: 64 symbols of 15,625 bars each, every
// symbol name 64 '<' (six bytes each in the page's JSON), 200,000 trades,
// the 50,000 fills ReadFills keeps, 200 log lines of 4,096 '"' (five bytes
// each in the page's HTML), and what on_finish returned, the failure's
// message and its traceback each of 1 MB of '<'. (The images the strategy
// saved are not counted: they are embedded up to 8 MiB, docs/report.md.)
func TestJobReportSizeBound(t *testing.T) {
	const nsym, nts = 64, 15_625
	rng := rand.New(rand.NewPCG(3, 4))
	start := int64(1767225600)
	e := &Equity{}
	for k := range nsym {
		p := Price{Symbol: fmt.Sprintf("%02d", k) + strings.Repeat("<", 62)}
		v := 100.0
		for i := range nts {
			v *= 1 + rng.NormFloat64()*0.002
			p.Times = append(p.Times, (start+int64(i)*60)*1e9)
			p.Close = append(p.Close, v)
		}
		e.Prices = append(e.Prices, p)
	}
	eq := 100000.0
	for i := range nts {
		eq *= 1 + rng.NormFloat64()*0.001
		e.Curve.Times = append(e.Curve.Times, (start+int64(i)*60)*1e9)
		e.Curve.Equity = append(e.Curve.Equity, eq)
		e.BuyAndHold = append(e.BuyAndHold, eq*(1+rng.Float64()*0.01))
	}
	trades := &Trades{}
	for i := range 200_000 {
		entry := (start + int64(i%nts)*60) * 1e9
		trades.Trades = append(trades.Trades, metrics.Trade{Symbol: e.Prices[i%nsym].Symbol, Long: i%2 == 0, Qty: 1 + rng.Float64(),
			EntryTime: entry, ExitTime: entry + 60e9, EntryPrice: 100 * rng.Float64(), ExitPrice: 100 * rng.Float64(),
			Fees: rng.Float64(), NetPnL: rng.NormFloat64(), Return: rng.NormFloat64() / 100})
	}
	trades.Total = len(trades.Trades)
	fills := &Fills{}
	for i := range maxFillsKept {
		fills.Fills = append(fills.Fills, Fill{Time: (start + int64(i%nts)*60) * 1e9, Symbol: e.Prices[i%nsym].Symbol,
			Buy: i%2 == 0, Qty: 1, Price: 100 * rng.Float64(), Fee: 0.1})
	}
	fills.Total = len(fills.Fills)
	huge := strings.Repeat("<", 1<<20)
	metadata, _ := json.Marshal(map[string]string{"x": huge})
	event := 999_999
	rep := &job.Report{JobID: "20261206-000000.000-size", Status: job.StatusFailed,
		Data:     contract.DataInfo{Source: "bars.csv", Events: 1_000_000},
		Failure:  &contract.Failure{Kind: contract.KindException, Hook: contract.HookOnBars, Message: huge, Traceback: huge, EventIndex: &event},
		Metadata: metadata}
	for k := range nsym {
		rep.Data.Symbols = append(rep.Data.Symbols, e.Prices[k].Symbol)
	}
	j := &Job{Report: rep, Equity: e, Trades: trades, Fills: fills, LogLines: 1_000_000}
	for range maxLogLines {
		j.Logs = append(j.Logs, LogLine{Time: time.Unix(start, 0), Stream: "stdout", Line: strings.Repeat(`"`, 4096)})
	}
	var buf bytes.Buffer
	if err := WriteJob(&buf, j, Options{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	t.Logf("1,000,000 bars over 64 symbols, 200,000 trades, 50,000 fills: %d bytes", buf.Len())
	if buf.Len() > 5e6 {
		t.Errorf("the report of a 1,000,000-bar job is %.2f MB, over 5 MB", float64(buf.Len())/1e6)
	}
}
