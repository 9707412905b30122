package engine

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"stratbench/backtest"
	"stratbench/contract"
	"stratbench/data"
	"stratbench/job"
)

// oneSymbolBars writes n 1-minute bars of one symbol, a seeded random walk,
// as a CSV file, and returns its path.
func oneSymbolBars(t testing.TB, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("timestamp,symbol,open,high,low,close,volume\n")
	rng := rand.New(rand.NewSource(7))
	t0 := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	p := 100.0
	for i := range n {
		o := p
		c := o * (1 + (rng.Float64()-0.5)*0.01)
		h, l := max(o, c)*(1+rng.Float64()*0.002), min(o, c)*(1-rng.Float64()*0.002)
		fmt.Fprintf(&b, "%s,X,%.4f,%.4f,%.4f,%.4f,%d\n", t0.Add(time.Duration(i)*time.Minute).Format(time.RFC3339), o, h, l, c, 100+rng.Intn(900))
		p = c
	}
	path := filepath.Join(t.TempDir(), "bars.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// severalSymbolsBars writes n minutes of bars of three symbols, seeded
// random walks, as a CSV file: A trades every minute, B most minutes (not
// every seventh), C every third minute, so that a symbol's next bar comes
// after none, one or several bars of the others. It returns the path.
func severalSymbolsBars(t testing.TB, n int) string {
	t.Helper()
	return patternBars(t, n, []string{"A", "B", "C"}, func(sym string, i int) bool {
		return !(sym == "B" && i%7 == 6 || sym == "C" && i%3 != 0)
	})
}

// hostFills is a backtest driver whose worker may not deliver fills
// itself: every order is a round trip, as before local fills.
type hostFills struct{ *backtest.Driver }

func (d hostFills) Setup() contract.Setup {
	s := d.Driver.Setup()
	s.LocalFills = false
	return s
}

// TestLocalFillsChangeNothing: a run whose worker delivers the fills of
// its market orders itself reports exactly what the same run reports when
// every order is a round trip to the host (status, failure with its event,
// fingerprint, orders hash, metrics, hook counts, commands discarded, and
// the digest of everything the strategy saw, bar by bar and execution by
// execution): with fees and slippage, with shorts, with on_execution and
// without, with rejections, limit orders, cancels, two orders in a call
// and orders from on_execution among them; and when the strategy raises or
// hangs after fills it delivered itself in the same batch. The local runs
// take fewer round trips (the sma and the example a tenth or less).
func TestLocalFillsChangeNothing(t *testing.T) {
	localFillsChangeNothing(t, oneSymbolBars(t, 1500), 10, 2)
}

// TestLocalFillsChangeNothingSeveralSymbols is TestLocalFillsChangeNothing
// over three symbols whose bars interleave unevenly: the worker goes on
// past an order through the other symbols' bars to the fill's, or stops
// before it at another command (the order then goes to the host
// unfilled), and reports exactly what every order a round trip reports.
func TestLocalFillsChangeNothingSeveralSymbols(t *testing.T) {
	localFillsChangeNothing(t, severalSymbolsBars(t, 600), 5, 1)
}

// localFillsChangeNothing runs the cases of TestLocalFillsChangeNothing on
// bars; the sma and the example take at least fewer times fewer round
// trips with local fills, a strategy that orders on every bar everyBar
// times fewer (with several symbols the next bar's order stops the worker
// before the fill it went on for).
func localFillsChangeNothing(t *testing.T, bars string, fewer, everyBar int) {
	py := findPython(t)
	set, err := data.Open(context.Background(), []string{bars}, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	home := t.TempDir()
	run := func(t *testing.T, strategy string, opts backtest.Options, params []string, local bool) (*job.Report, int) {
		t.Helper()
		d, err := backtest.NewDriver(set, opts)
		if err != nil {
			t.Fatal(err)
		}
		var drv contract.Driver = d
		if !local {
			drv = hostFills{d}
		}
		cfg := Config{Strategy: filepath.Join("..", strategy), Python: py, Home: home, CacheDir: filepath.Join(home, "cache"),
			Limits: shortLimits(), Version: "test", Host: testHost, Params: params}
		jb, err := Start(context.Background(), cfg, drv)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := jb.Wait()
		if err != nil {
			t.Fatal(err)
		}
		return rep, jb.batches
	}
	market := backtest.DefaultOptions()
	costly := market
	costly.FeeBps, costly.SlippageBps = 2.5, 1.5
	short := market
	short.AllowShort = true
	for _, tc := range []struct {
		name, strategy string
		opts           backtest.Options
		params         []string
		status         job.Status
		fewer          int // at least this many times fewer round trips with local fills
	}{
		{"sma", "backtest/testdata/sma_cross.py", costly, nil, job.StatusPassed, fewer},
		{"example", "python/example/strategy.py", market, nil, job.StatusPassed, fewer},
		{"every-bar", "testdata/strategies/order_every_bar.py", market, nil, job.StatusPassed, everyBar},
		{"mixed", "testdata/strategies/local_fills.py", costly, nil, job.StatusPassed, 1},
		{"mixed-short", "testdata/strategies/local_fills.py", short, []string{"qty=0.25"}, job.StatusPassed, 1},
		{"mixed-noexec", "testdata/strategies/local_fills_noexec.py", costly, nil, job.StatusPassed, 1},
		{"raise", "testdata/strategies/local_fills.py", market, []string{"mode=raise", "at=1100"}, job.StatusFailed, 1},
		{"raise-noexec", "testdata/strategies/local_fills_noexec.py", market, []string{"mode=raise", "at=1100"}, job.StatusFailed, 1},
		{"hang", "testdata/strategies/local_fills.py", market, []string{"mode=hang", "at=1100"}, job.StatusFailed, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host, hostTrips := run(t, tc.strategy, tc.opts, tc.params, false)
			local, localTrips := run(t, tc.strategy, tc.opts, tc.params, true)
			if host.Status != tc.status {
				t.Fatalf("%s, %+v; want %s", host.Status, host.Failure, tc.status)
			}
			sameRun(t, tc.name+" (host fills: cold, local fills: warm)", host, local)
			if f := host.Failure; f != nil && (f.EventIndex == nil || *f.EventIndex != 1099) {
				t.Errorf("the failure's event %v, want 1099", f.EventIndex)
			}
			t.Logf("%d fills, %d round trips with every order one, %d with local fills", host.Metrics.Fills, hostTrips, localTrips)
			if localTrips*tc.fewer >= hostTrips {
				t.Errorf("%d round trips with local fills, %d without: want %d times fewer", localTrips, hostTrips, tc.fewer)
			}
		})
	}
}

// TestLocalFillsStayWithinAMessage: however many orders the worker fills
// itself within one request's budget, the commands it sends meanwhile and
// the yield listing the fills stay within the protocol's message limit
// (the bridge yields first: python.LocalMarket.MaxBytes), so an honest run
// that orders on every bar passes, as it does with every fill a round trip;
// here with a message limit of 64 KiB, some 1,500 commands, which the
// worker reaches well within its 50 ms budget.
func TestLocalFillsStayWithinAMessage(t *testing.T) {
	py := findPython(t)
	const n = 20000
	set, err := data.Open(context.Background(), []string{oneSymbolBars(t, n)}, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	home := t.TempDir()
	limits := shortLimits()
	limits.MessageBytes = 64 << 10
	run := func(local bool) (*job.Report, int) {
		d, err := backtest.NewDriver(set, backtest.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		var drv contract.Driver = d
		if !local {
			drv = hostFills{d}
		}
		cfg := Config{Strategy: filepath.Join("..", "testdata", "strategies", "flip_every_bar.py"), Python: py, Home: home,
			CacheDir: filepath.Join(home, "cache"), Limits: limits, Version: "test", Host: testHost}
		jb, err := Start(context.Background(), cfg, drv)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := jb.Wait()
		if err != nil {
			t.Fatal(err)
		}
		return rep, jb.batches
	}
	local, localTrips := run(true)
	t.Logf("local trips %d", localTrips)
	if local.Status != job.StatusPassed || local.Metrics.Fills != n-1 {
		t.Fatalf("with local fills: %s, %+v, %v fills; want passed, %d fills", local.Status, local.Failure, local.Metrics, n-1)
	}
	host, hostTrips := run(false)
	sameRun(t, "host fills: cold, local fills: warm", host, local)
	if localTrips*10 >= hostTrips {
		t.Errorf("%d round trips with local fills, %d without: want ten times fewer", localTrips, hostTrips)
	}
}
