package engine

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"stratbench/backtest"
	"stratbench/contract"
	"stratbench/job"
)

// patternBars writes n minutes of bars of the symbols of pattern, seeded
// random walks, as a CSV file: symbol s has a bar at minute i when
// pattern[s](i). It returns the path.
func patternBars(t testing.TB, n int, symbols []string, has func(sym string, i int) bool) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("timestamp,symbol,open,high,low,close,volume\n")
	rng := rand.New(rand.NewSource(13))
	t0 := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	price := map[string]float64{}
	for k, s := range symbols {
		price[s] = 50 + 30*float64(k)
	}
	for i := range n {
		for _, sym := range symbols {
			if !has(sym, i) {
				continue
			}
			o := price[sym]
			c := o * (1 + (rng.Float64()-0.5)*0.01)
			h, l := max(o, c)*(1+rng.Float64()*0.002), min(o, c)*(1-rng.Float64()*0.002)
			fmt.Fprintf(&b, "%s,%s,%.4f,%.4f,%.4f,%.4f,%d\n", t0.Add(time.Duration(i)*time.Minute).Format(time.RFC3339), sym, o, h, l, c, 100+rng.Intn(900))
			price[sym] = c
		}
	}
	path := filepath.Join(t.TempDir(), "bars.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// probeRun is a run of testdata/strategies/local_fills_probe.py (or
// strategy) on bars, made with local fills and with every order a round
// trip (same); during, when set, sees each run's events.
type probeRun struct {
	bars     string
	strategy string
	opts     backtest.Options
	params   []string
	limits   job.Limits
	during   func(*Job, job.Event)
}

// same runs p both ways at once (bothWays) and requires the same report
// (sameRun) and status.
func (p probeRun) same(t *testing.T, status job.Status) (host, local *job.Report) {
	t.Helper()
	py := findPython(t)
	set := openBars(t, p.bars)
	strategy := p.strategy
	if strategy == "" {
		strategy = "testdata/strategies/local_fills_probe.py"
	}
	limits := p.limits
	if limits == (job.Limits{}) {
		limits = shortLimits()
	}
	h, l := bothWays(t, func(local bool, home string) (fillsRun, error) {
		return runFills(set, p.opts, local, fillsConfig(py, strategy, home, limits, p.params), p.during)
	})
	host, local = h.report, l.report
	if host.Status != status {
		t.Errorf("host fills: %s, %+v; want %s", host.Status, host.Failure, status)
	}
	sameRun(t, "host fills: cold, local fills: warm", host, local)
	if host.Metrics != nil && local.Metrics != nil {
		t.Logf("%d round trips with every order one, %d with local fills", h.trips, l.trips)
		if !reflect.DeepEqual(host.Metrics, local.Metrics) {
			t.Logf("metrics: host %+v\nlocal %+v", *host.Metrics, *local.Metrics)
		}
	}
	if host.Failure != nil || local.Failure != nil {
		t.Logf("failure: host %+v, local %+v", host.Failure, local.Failure)
	}
	return host, local
}

func costlyShort() backtest.Options {
	o := backtest.DefaultOptions()
	o.FeeBps, o.SlippageBps, o.AllowShort = 3.5, 2.25, true
	return o
}

// TestLocalFillsProbeHonest: honest but odd strategies over several
// symbols report exactly what they report with every order a round trip.
func TestLocalFillsProbeHonest(t *testing.T) {
	findPython(t)
	three := severalSymbolsBars(t, 400)
	// S trades once, at minute 37; R every 150th minute; A every minute.
	sparse := patternBars(t, 600, []string{"A", "R", "S"}, func(s string, i int) bool {
		switch s {
		case "R":
			return i%150 == 5
		case "S":
			return i == 37
		}
		return true
	})
	one := oneSymbolBars(t, 300)
	market := backtest.DefaultOptions()
	for _, tc := range []struct {
		name string
		p    probeRun
	}{
		{"every-bar-alternating", probeRun{bars: three, opts: market}},
		{"every-bar-costly-short", probeRun{bars: three, opts: costlyShort(), params: []string{"short=1", "qty=2.5"}}},
		{"exec-orders", probeRun{bars: three, opts: costlyShort(), params: []string{"every=3", "exec_orders=1", "short=1"}}},
		{"only-C", probeRun{bars: three, opts: market, params: []string{"only=C"}}},
		{"only-B-every-2", probeRun{bars: three, opts: costlyShort(), params: []string{"only=B", "every=2", "exec_orders=1"}}},
		{"sparse-R", probeRun{bars: sparse, opts: market, params: []string{"only=R"}}},
		{"sparse-S-once", probeRun{bars: sparse, opts: market, params: []string{"only=S"}}},
		{"round-cash", probeRun{bars: three, opts: costlyShort(), params: []string{"only=B", "round_cash=1"}}},
		{"round-cash-one-symbol", probeRun{bars: one, opts: costlyShort(), params: []string{"every=3", "round_cash=1"}}},
		{"set-symbol", probeRun{bars: three, opts: market, params: []string{"only=A", "every=4", "other=B"}}},
		{"sparse-A-to-S", probeRun{bars: sparse, opts: market, params: []string{"only=A", "every=5"}}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.p.same(t, job.StatusPassed) })
	}
}

// TestLocalFillsProbeFailures: a strategy that fails while the fill of an
// order its worker went on past is due (in the other symbols' on_data, in
// the fill's on_execution) reports what it reports with every order a
// round trip: the same failure, hook and event, the same metrics.
func TestLocalFillsProbeFailures(t *testing.T) {
	findPython(t)
	three := severalSymbolsBars(t, 300)
	market := backtest.DefaultOptions()
	// Orders on A only: B and C bars run between an order and its fill.
	for _, tc := range []struct {
		name   string
		params []string
	}{
		{"raise-other-symbol", []string{"only=C", "mode=raise", "at=101"}},
		{"hang-other-symbol", []string{"only=C", "mode=hang", "at=101"}},
		{"raise-exec", []string{"only=C", "mode=raise_exec", "at=7"}},
		{"hang-exec", []string{"only=C", "mode=hang_exec", "at=7"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // two of the four wait out a hook's limit
			probeRun{bars: three, opts: market, params: tc.params}.same(t, job.StatusFailed)
		})
	}
}

// TestLocalFillsProbeBudget: a strategy whose other symbols' on_data
// sleep while a fill is due (the batch budget passes between the order
// and its fill) reports what it reports with every order a round trip.
func TestLocalFillsProbeBudget(t *testing.T) {
	findPython(t)
	three := severalSymbolsBars(t, 120)
	for _, ms := range []string{"20", "45", "60"} {
		t.Run(ms, func(t *testing.T) {
			t.Parallel() // the runs mostly sleep
			probeRun{bars: three, opts: backtest.DefaultOptions(), params: []string{"only=C", "mode=sleep", "sleep_ms=" + ms}}.same(t, job.StatusPassed)
		})
	}
}

// TestLocalFillsProbeStop: a stop requested while the fill of an order
// the worker went on past is due (the strategy waits in another symbol's
// on_data for the stop word) ends the run as it ends with every order a
// round trip: stopped, on_finish run, the same records.
func TestLocalFillsProbeStop(t *testing.T) {
	findPython(t)
	three := severalSymbolsBars(t, 300)
	// Orders on every C bar: bar 101 is an A or B bar while the fill of C's last order is due.
	stopOn := func(j *Job, e job.Event) {
		if ll, ok := e.(job.LogLines); ok {
			for _, l := range ll.Lines {
				if strings.HasPrefix(l.Line, "STOP ME") {
					j.Stop()
				}
			}
		}
	}
	p := probeRun{bars: three, opts: backtest.DefaultOptions(), params: []string{"only=C", "mode=stop", "at=101"}, during: stopOn}
	host, local := p.same(t, job.StatusStopped)
	for name, r := range map[string]*job.Report{"host": host, "local": local} {
		if r.Hooks[contract.HookOnFinish].Count != 1 {
			t.Errorf("%s: on_finish ran %d times", name, r.Hooks[contract.HookOnFinish].Count)
		}
	}
}

// TestStopEndsTheBarLoop: a stop requested while a strategy over one
// symbol runs fast bars that order nothing (the probe waits at bar 1,000
// for the stop word, then 2 ms more) ends the batch after that call: the
// bridge's bar loop looks for a stop once a millisecond
// (python/bridge.py, _STOP_POLL_NS), not only at its budget.
func TestStopEndsTheBarLoop(t *testing.T) {
	py := findPython(t)
	set := openBars(t, oneSymbolBars(t, 20000))
	stopOn := func(j *Job, e job.Event) {
		if ll, ok := e.(job.LogLines); ok {
			for _, l := range ll.Lines {
				if strings.HasPrefix(l.Line, "STOP ME") {
					j.Stop()
				}
			}
		}
	}
	cfg := fillsConfig(py, "testdata/strategies/local_fills_probe.py", t.TempDir(), shortLimits(), []string{"every=1000000", "mode=stop", "at=1000"})
	r, err := runFills(set, backtest.DefaultOptions(), true, cfg, stopOn)
	if err != nil {
		t.Fatal(err)
	}
	if r.report.Status != job.StatusStopped {
		t.Fatalf("%s, %+v; want stopped", r.report.Status, r.report.Failure)
	}
	if n := r.report.Hooks[contract.HookOnData].Count; n != 1000 {
		t.Errorf("on_data ran %d times, want 1000: the stop was seen after the call that waited for it", n)
	}
}

// TestLocalFillsProbeBatchEdges: more than one batch of bars (65,536),
// orders on the bars around the batches' ends.
func TestLocalFillsProbeBatchEdges(t *testing.T) {
	if testing.Short() {
		t.Skip("large data")
	}
	findPython(t)
	big := severalSymbolsBars(t, 60000) // about 131,000 bars
	var also []string
	for _, edge := range []int{65536, 131072} {
		for d := -3; d <= 3; d++ {
			also = append(also, fmt.Sprint(edge+d))
		}
	}
	probeRun{bars: big, opts: costlyShort(), params: []string{"every=997", "short=1", "also=" + strings.Join(also, ",")}}.same(t, job.StatusPassed)
}

// TestLocalFillsProbeLastBar: orders on the data's last bars, whose
// fills the market never makes (no next bar), with one symbol and with
// several: the worker yields after each such order, holds no claim, and
// the run reports exactly what it reports with every order a round trip
// (passed, the orders left open). A worker that claims such a fill fails
// (testdata/attacks/forged_local_lastbar*.py).
func TestLocalFillsProbeLastBar(t *testing.T) {
	findPython(t)
	one := oneSymbolBars(t, 300)
	three := severalSymbolsBars(t, 400) // every symbol has a bar at the last minute
	last := func(path string, back ...int) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		n := strings.Count(string(b), "\n") - 1 // bars, without the header
		var also []string
		for _, d := range back {
			also = append(also, fmt.Sprint(n-d))
		}
		return "also=" + strings.Join(also, ",")
	}
	for _, tc := range []struct {
		name string
		p    probeRun
	}{
		{"one-symbol", probeRun{bars: one, opts: costlyShort(), params: []string{"every=7", last(one, 0)}}},
		{"one-symbol-fill-then-order", probeRun{bars: one, opts: costlyShort(), params: []string{"every=7", "short=1", last(one, 1, 0)}}},
		{"several-symbols", probeRun{bars: three, opts: costlyShort(), params: []string{"every=11", last(three, 0)}}},
		{"several-symbols-each-last", probeRun{bars: three, opts: costlyShort(), params: []string{"every=11", "short=1", last(three, 2, 1, 0)}}},
		{"several-symbols-exec-orders", probeRun{bars: three, opts: backtest.DefaultOptions(), params: []string{"every=3", "exec_orders=1", last(three, 3, 2, 1, 0)}}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.p.same(t, job.StatusPassed) })
	}
}
