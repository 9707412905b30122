package engine

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
	set := openBars(t, bars)
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
			host, local := bothWays(t, func(local bool, home string) (fillsRun, error) {
				return runFills(set, tc.opts, local, fillsConfig(py, tc.strategy, home, shortLimits(), tc.params), nil)
			})
			if host.report.Status != tc.status {
				t.Fatalf("%s, %+v; want %s", host.report.Status, host.report.Failure, tc.status)
			}
			sameRun(t, tc.name+" (host fills: cold, local fills: warm)", host.report, local.report)
			if f := host.report.Failure; f != nil && (f.EventIndex == nil || *f.EventIndex != 1099) {
				t.Errorf("the failure's event %v, want 1099", f.EventIndex)
			}
			t.Logf("%d fills, %d round trips with every order one, %d with local fills", host.report.Metrics.Fills, host.trips, local.trips)
			if local.trips*tc.fewer >= host.trips {
				t.Errorf("%d round trips with local fills, %d without: want %d times fewer", local.trips, host.trips, tc.fewer)
			}
		})
	}
}

// openBars opens the bars file path for the test, closed when it ends.
func openBars(t *testing.T, path string) *data.Set {
	t.Helper()
	set, err := data.Open(context.Background(), []string{path}, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	return set
}

// fillsConfig is the configuration of a run of strategy (a path from the
// repository's root) in home.
func fillsConfig(py *Interpreter, strategy, home string, limits job.Limits, params []string) Config {
	return Config{Strategy: filepath.Join("..", strategy), Python: py, Home: home, CacheDir: filepath.Join(home, "cache"),
		Limits: limits, Version: "test", Host: testHost, Params: params}
}

// fillsRun is what one run of a comparison reports: its report and its
// round trips to the worker (batch requests).
type fillsRun struct {
	report *job.Report
	trips  int
}

// runFills runs cfg on set with the market opts: with the worker's local
// fills, or (local false) with every order a round trip to the host, as
// before local fills. during, when set, sees each event as it arrives. It
// returns its errors rather than failing a test, so that it may run on a
// goroutine of its own (bothWays).
func runFills(set *data.Set, opts backtest.Options, local bool, cfg Config, during func(*Job, job.Event)) (fillsRun, error) {
	d, err := backtest.NewDriver(set, opts)
	if err != nil {
		return fillsRun{}, err
	}
	var drv contract.Driver = d
	if !local {
		drv = hostFills{d}
	}
	jb, err := Start(context.Background(), cfg, drv)
	if err != nil {
		return fillsRun{}, err
	}
	for e := range jb.Events() {
		if during != nil {
			during(jb, e)
		}
	}
	rep, err := jb.Wait()
	if err != nil {
		return fillsRun{}, err
	}
	return fillsRun{rep, jb.batches}, nil
}

// bothWays makes the two runs of a comparison at the same time: with
// every order a round trip to the host (host) and with local fills
// (local), each in a home of its own (the same set may feed both: a
// data.Set is safe for concurrent use). Most of a run's time is spent
// waiting on its worker (a hook's sleep, a hang's limit), so the pair
// takes about as long as its slower run. It fails t, from t's goroutine,
// when either run could not be made.
func bothWays(t *testing.T, run func(local bool, home string) (fillsRun, error)) (host, local fillsRun) {
	t.Helper()
	hostHome, localHome := t.TempDir(), t.TempDir()
	var hostErr, localErr error
	var wg sync.WaitGroup
	wg.Go(func() { host, hostErr = run(false, hostHome) })
	local, localErr = run(true, localHome)
	wg.Wait()
	if hostErr != nil {
		t.Errorf("with host fills: %v", hostErr)
	}
	if localErr != nil {
		t.Errorf("with local fills: %v", localErr)
	}
	if hostErr != nil || localErr != nil {
		t.FailNow()
	}
	return host, local
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
	set := openBars(t, oneSymbolBars(t, n))
	limits := shortLimits()
	limits.MessageBytes = 64 << 10
	host, local := bothWays(t, func(local bool, home string) (fillsRun, error) {
		return runFills(set, backtest.DefaultOptions(), local, fillsConfig(py, "testdata/strategies/flip_every_bar.py", home, limits, nil), nil)
	})
	t.Logf("local trips %d", local.trips)
	if local.report.Status != job.StatusPassed || local.report.Metrics.Fills != n-1 {
		t.Fatalf("with local fills: %s, %+v, %v fills; want passed, %d fills", local.report.Status, local.report.Failure, local.report.Metrics, n-1)
	}
	sameRun(t, "host fills: cold, local fills: warm", host.report, local.report)
	if local.trips*10 >= host.trips {
		t.Errorf("%d round trips with local fills, %d without: want ten times fewer", local.trips, host.trips)
	}
}
