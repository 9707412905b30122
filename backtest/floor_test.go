package backtest

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"stratbench/contract"
	"stratbench/data"
)

// fsum is Python's math.fsum (Shewchuk's algorithm with CPython's final
// rounding): a correctly rounded sum, so that the Go re-statements below
// compute the same SMAs as the Python strategies, bit for bit.
func fsum(xs []float64) float64 {
	partials := make([]float64, 0, 8)
	for _, x := range xs {
		i := 0
		for _, y := range partials {
			if math.Abs(x) < math.Abs(y) {
				x, y = y, x
			}
			hi := x + y
			lo := y - (hi - x)
			if lo != 0 {
				partials[i] = lo
				i++
			}
			x = hi
		}
		partials = append(partials[:i], x)
	}
	n := len(partials)
	if n == 0 {
		return 0
	}
	n--
	hi := partials[n]
	lo := 0.0
	for n > 0 {
		x := hi
		n--
		y := partials[n]
		hi = x + y
		lo = y - (hi - x)
		if lo != 0 {
			break
		}
	}
	// Round half to even across the remaining partials, as CPython does.
	if n > 0 && (lo < 0 && partials[n-1] < 0 || lo > 0 && partials[n-1] > 0) {
		y := lo * 2
		x := hi + y
		if y == x-hi {
			hi = x
		}
	}
	return hi
}

func TestFsum(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{0.1, 0.2, 0.3}, 0.6},
		{[]float64{1e100, 1, -1e100}, 1},
		{[]float64{1, 1e-16, 1e-16}, 1.0000000000000002},
		// Half-way cases rounded to even (from CPython's test_math).
		{[]float64{1, 0x1p-53, 0x1p-106}, 1.0000000000000002},
		{[]float64{1, -0x1p-54, -0x1p-108}, 0.9999999999999999},
	} {
		if got := fsum(tc.in); got != tc.want {
			t.Errorf("fsum(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// smaCross re-states testdata/sma_cross.py (sizing 0.99) and
// sma_cross_pair.py (sizing 0.495) in Go.
type smaCross struct {
	fast, slow int
	sizing     float64
	closes     map[string][]float64
}

func (s *smaCross) onData(w *scriptWorker, ev barEvent) []contract.Command {
	h := append(s.closes[ev.Symbol], ev.Close)
	s.closes[ev.Symbol] = h
	if len(h) < s.slow {
		return nil
	}
	fastMA := fsum(h[len(h)-s.fast:]) / float64(s.fast)
	slowMA := fsum(h[len(h)-s.slow:]) / float64(s.slow)
	pos := w.position[ev.Symbol]
	switch {
	case pos == 0 && fastMA > slowMA:
		if qty := math.Trunc(s.sizing * w.cash / ev.Close); qty > 0 {
			return cmds(w.order("buy", ev.Symbol, qty))
		}
	case pos > 0 && fastMA < slowMA:
		return cmds(w.order("sell", ev.Symbol, pos))
	}
	return nil
}

// limitCross re-states testdata/limit_cross.py in Go.
type limitCross struct {
	fast, slow, patience int
	offset               float64
	closes               map[string][]float64
	working              map[string]*[2]int64 // order id (0 for none), bars since placed
}

func (s *limitCross) onExec(w *scriptWorker, x contract.Execution) []contract.Command {
	if wk := s.working[x.Symbol]; wk != nil && wk[0] == x.OrderID {
		wk[0] = 0
	}
	return nil
}

func (s *limitCross) onData(w *scriptWorker, ev barEvent) []contract.Command {
	h := append(s.closes[ev.Symbol], ev.Close)
	s.closes[ev.Symbol] = h
	wk := s.working[ev.Symbol]
	if wk == nil {
		wk = new([2]int64)
		s.working[ev.Symbol] = wk
	}
	if wk[0] != 0 {
		wk[1]++
		if wk[1] == int64(s.patience) {
			return cmds(w.cancel(wk[0]))
		}
		return nil
	}
	if len(h) < s.slow {
		return nil
	}
	fastMA := fsum(h[len(h)-s.fast:]) / float64(s.fast)
	slowMA := fsum(h[len(h)-s.slow:]) / float64(s.slow)
	pos := w.position[ev.Symbol]
	switch {
	case pos == 0 && fastMA > slowMA:
		if qty := math.Trunc(0.99 * w.cash / ev.Close); qty > 0 {
			c := w.order("buy", ev.Symbol, qty, ev.Close*(1-s.offset))
			wk[0], wk[1] = c.OrderID, 0
			return cmds(c)
		}
	case pos > 0 && fastMA < slowMA:
		c := w.order("sell", ev.Symbol, pos, ev.Close*(1+s.offset))
		wk[0], wk[1] = c.OrderID, 0
		return cmds(c)
	}
	return nil
}

// writeWalk writes a seeded random walk of 1-minute bars for symbols,
// interleaved, with prices in cents, and returns its path.
func writeWalk(t testing.TB, dir string, seed uint64, symbols []string, perSymbol int) string {
	rng := splitmix64(seed)
	price := make([]float64, len(symbols))
	for i := range price {
		price[i] = 100 + 50*float64(i)
	}
	var sb strings.Builder
	sb.WriteString("timestamp,symbol,open,high,low,close,volume\n")
	for m := 0; m < perSymbol; m++ {
		ts := strconv.FormatInt(1767225600+int64(m)*60, 10)
		for i, sym := range symbols {
			open := cents(price[i])
			hi, lo := open, open
			for range 3 {
				price[i] = cents(price[i] * (1 + 0.002*rng.normal()))
				hi, lo = max(hi, price[i]), min(lo, price[i])
			}
			sb.WriteString(ts + "," + sym + "," + fmtFloat(open) + "," + fmtFloat(hi+0.01) + "," +
				fmtFloat(max(lo-0.01, 0.01)) + "," + fmtFloat(price[i]) + "," + strconv.FormatUint(100+rng.next()%900, 10) + "\n")
		}
	}
	path := filepath.Join(dir, "walk.csv")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type floorResult struct {
	Bars        int                `json:"bars"`
	Fills       int                `json:"fills"`
	Rejections  int                `json:"rejections"`
	Cash        float64            `json:"cash"`
	Positions   map[string]float64 `json:"positions"`
	FinalEquity float64            `json:"final_equity"`
	Executions  []struct {
		OrderID  int64   `json:"order_id"`
		Symbol   string  `json:"symbol"`
		Side     string  `json:"side"`
		Qty      float64 `json:"qty"`
		Price    float64 `json:"price"`
		Fee      float64 `json:"fee"`
		Status   string  `json:"status"`
		Reason   string  `json:"reason"`
		Time     int64   `json:"time"`
		Event    int     `json:"event"`
		Cash     float64 `json:"cash"`
		Position float64 `json:"position"`
	} `json:"executions"`
}

// python returns the interpreter for tests: $STRATBENCH_PYTHON or python3.
func python(t *testing.T) string {
	if p := os.Getenv("STRATBENCH_PYTHON"); p != "" {
		return p
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH")
	}
	return p
}

func runFloor(t *testing.T, strategy, data string, opts Options) floorResult {
	t.Helper()
	args := []string{filepath.Join("..", "bench", "floor.py"), filepath.Join("testdata", strategy), data,
		"--cash", fmtFloat(opts.Cash), "--fee-bps", fmtFloat(opts.FeeBps), "--slippage-bps", fmtFloat(opts.SlippageBps),
		"--json", "--executions"}
	if opts.AllowShort {
		args = append(args, "--allow-short")
	}
	cmd := exec.Command(python(t), args...)
	cmd.Env = append(os.Environ(), "PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("floor.py: %v\n%s", err, stderr)
	}
	var r floorResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("floor.py output: %v\n%s", err, out)
	}
	return r
}

// TestFloorAgreesWithSimulator replays the same strategies on the same data
// in bench/floor.py (an independent Python implementation of the fill model)
// and in the simulator driven by Go re-statements of the strategies: every
// execution must agree exactly, and so must the final cash and equity.
func TestFloorAgreesWithSimulator(t *testing.T) {
	dir := t.TempDir()
	one := writeWalk(t, dir, 42, []string{"WALK"}, 20_000)
	pairDir := filepath.Join(dir, "pair")
	os.Mkdir(pairDir, 0o755)
	two := writeWalk(t, pairDir, 7, []string{"AAA", "BBB"}, 10_000)
	type strategy struct {
		file   string
		onData func(w *scriptWorker, ev barEvent) []contract.Command
		onExec func(w *scriptWorker, x contract.Execution) []contract.Command
	}
	sma := func(sizing float64) func() strategy {
		return func() strategy {
			s := &smaCross{fast: 10, slow: 30, sizing: sizing, closes: map[string][]float64{}}
			file := "sma_cross.py"
			if sizing != 0.99 {
				file = "sma_cross_pair.py"
			}
			return strategy{file: file, onData: s.onData}
		}
	}
	limit := func() strategy {
		s := &limitCross{fast: 5, slow: 20, patience: 5, offset: 0.002, closes: map[string][]float64{}, working: map[string]*[2]int64{}}
		return strategy{file: "limit_cross.py", onData: s.onData, onExec: s.onExec}
	}
	fees := Options{Cash: 100_000, FeeBps: 10, SlippageBps: 5}
	for _, tc := range []struct {
		name     string
		data     string
		opts     Options
		strategy func() strategy
	}{
		{"sma one symbol", one, DefaultOptions(), sma(0.99)},
		{"sma one symbol with fees and slippage", one, fees, sma(0.99)},
		{"sma two symbols", two, DefaultOptions(), sma(0.99)},
		{"sma two symbols with fees", two, fees, sma(0.99)},
		{"sma pair with fees", two, fees, sma(0.495)},
		{"limits and cancels one symbol", one, fees, limit},
		{"limits and cancels two symbols", two, DefaultOptions(), limit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.strategy()
			floor := runFloor(t, st.file, tc.data, tc.opts)

			set, err := openPaths(t, data.Window{}, tc.data)
			if err != nil {
				t.Fatal(err)
			}
			drv := mustDriver(t, set, tc.opts)
			w := newScriptWorker(t, drv)
			w.onData, w.onExec = st.onData, st.onExec
			if err := drv.Drive(context.Background(), w, newMemRecords()); err != nil {
				t.Fatal(err)
			}
			m := drv.Outcome().Metrics

			if n := int(set.Info().Events); floor.Bars != n {
				t.Fatalf("floor replayed %d bars, simulator %d", floor.Bars, n)
			}
			if len(floor.Executions) != len(w.execs) {
				t.Fatalf("floor has %d executions, simulator %d", len(floor.Executions), len(w.execs))
			}
			for i, f := range floor.Executions {
				g := w.execs[i]
				if f.OrderID != g.OrderID || f.Symbol != g.Symbol || f.Side != string(g.Side) || f.Qty != g.Qty ||
					f.Price != g.Price || f.Fee != g.Fee || f.Status != string(g.Status) || f.Reason != g.Reason ||
					f.Time != g.Time || f.Event != g.Event || f.Cash != g.Cash || f.Position != g.Position {
					t.Fatalf("execution %d differs:\nfloor     %+v\nsimulator %+v", i, f, g)
				}
			}
			if floor.Fills != m.Fills || floor.Rejections != m.Rejections {
				t.Errorf("fills %d/%d rejections %d/%d (floor/simulator)", floor.Fills, m.Fills, floor.Rejections, m.Rejections)
			}
			if !relClose(floor.Cash, m.FinalCash) || !relClose(floor.FinalEquity, m.FinalEquity) {
				t.Errorf("final cash %v / %v, equity %v / %v (floor/simulator)", floor.Cash, m.FinalCash, floor.FinalEquity, m.FinalEquity)
			}
			if len(floor.Positions) != len(m.Positions) {
				t.Errorf("positions %v / %v (floor/simulator)", floor.Positions, m.Positions)
			}
			for s, p := range floor.Positions {
				if m.Positions[s] != p {
					t.Errorf("position %s %v / %v (floor/simulator)", s, p, m.Positions[s])
				}
			}
			if m.Fills == 0 {
				t.Error("the strategy never traded: the comparison proves nothing")
			}
			t.Logf("%d executions: %d fills, %d rejections, %d cancels, %d trades; final equity %v",
				len(w.execs), m.Fills, m.Rejections, m.Cancels, m.Trades, m.FinalEquity)
		})
	}
}

// relClose compares to 1e-9 relative.
func relClose(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}
