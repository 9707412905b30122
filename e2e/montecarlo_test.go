package e2e

// End-to-end tests of `stratbench montecarlo` through the binary: the
// same seed gives the same numbers, a job whose trades all win has no
// loss under reshuffling, and the job's report draws the fan of the
// paths. Bad usage (exit 2 naming the flag) is
// testdata/script/montecarlo_usage.txtar.

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"stratbench/internal/browsertest"
	"stratbench/internal/e2etest"
	"stratbench/job"
)

// risingBars writes a CSV of n one-minute bars whose closes only rise.
func risingBars(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("timestamp,symbol,open,high,low,close,volume\n")
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	for i := range n {
		o, c := 100+float64(i)*0.1, 100+float64(i+1)*0.1
		fmt.Fprintf(&b, "%s,UP,%.4f,%.4f,%.4f,%.4f,1000\n", start.Add(time.Duration(i)*time.Minute).Format(time.RFC3339), o, c, o, c)
	}
	path := filepath.Join(t.TempDir(), "up.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runJob runs args with --ci and returns the job's id.
func runJob(t *testing.T, e *env, args ...string) string {
	t.Helper()
	r := e.Run(append([]string{"--ci", "--output", "json"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("the run: exit %d\n%s", r.Code, r.Stderr)
	}
	return e2etest.DecodeReport(t, r.Stdout).JobID
}

// monteCarlo runs `montecarlo` with args and decodes its --output json.
func monteCarlo(t *testing.T, e *env, args ...string) *job.MonteCarlo {
	t.Helper()
	r := e.Run(append([]string{"montecarlo", "--output", "json"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("montecarlo %v: exit %d\n%s", args, r.Code, r.Stderr)
	}
	var mc job.MonteCarlo
	if err := json.Unmarshal([]byte(r.Stdout), &mc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.Stdout)
	}
	return &mc
}

// TestMonteCarloSameSeedSameNumbers: each method gives the same numbers
// for the same seed, other numbers for another, and keeps what it printed
// in the job's folder.
func TestMonteCarloSameSeedSameNumbers(t *testing.T) {
	e := newEnv(t)
	id := runJob(t, e, e2etest.SweepStrategy, "--to", "2026-01-06")
	for _, method := range []string{"trades", "bootstrap", "blocks"} {
		a := monteCarlo(t, e, id, "--method", method, "--seed", "7", "--runs", "300")
		b := monteCarlo(t, e, id, "--method", method, "--seed", "7", "--runs", "300")
		c := monteCarlo(t, e, id, "--method", method, "--seed", "8", "--runs", "300")
		if a.Runs != 300 || a.Seed != 7 || a.Method != method || a.JobID != id || a.Steps < 10 {
			t.Fatalf("%s: %+v", method, a)
		}
		if !reflect.DeepEqual(a.MaxDrawdown, b.MaxDrawdown) || !reflect.DeepEqual(a.TotalReturn, b.TotalReturn) ||
			!reflect.DeepEqual(a.Sharpe, b.Sharpe) || !reflect.DeepEqual(a.Fan, b.Fan) || a.LossProbability != b.LossProbability {
			t.Errorf("%s: seed 7 twice differs:\n%+v\n%+v", method, a, b)
		}
		if reflect.DeepEqual(a.MaxDrawdown, c.MaxDrawdown) {
			t.Errorf("%s: seeds 7 and 8 give the same drawdowns %+v", method, a.MaxDrawdown)
		}
		kept, err := os.ReadFile(filepath.Join(e.Home, "jobs", id, job.MonteCarloFileName))
		if err != nil {
			t.Fatal(err)
		}
		var k job.MonteCarlo
		json.Unmarshal(kept, &k)
		if k.Seed != 8 || k.Method != method || !reflect.DeepEqual(k.MaxDrawdown, c.MaxDrawdown) {
			t.Errorf("%s: kept %+v, want the last result", method, k)
		}
	}
	// The default: 1,000 runs of the trades, seed 0, in a text table.
	r := e.Run("montecarlo", id[len(id)-4:])
	if r.Code != 0 || !strings.Contains(r.Stdout, "1,000 paths of its") || !strings.Contains(r.Stdout, "closed trades in random orders, seed 0") ||
		!strings.Contains(r.Stdout, "probability of a loss") {
		t.Fatalf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestMonteCarloAllTradesWin: a job whose trades all win cannot lose
// money in any order of them: the probability of a loss is 0 under
// reshuffling, every path ends at the job's realised return, and none
// draws down.
func TestMonteCarloAllTradesWin(t *testing.T) {
	e := newEnv(t)
	id := runJob(t, e, "testdata/robust/always_wins.py", "--data", risingBars(t, 400), "--fee-bps", "0", "--slippage-bps", "0")
	mc := monteCarlo(t, e, id, "--method", "trades")
	if mc.Steps < 50 {
		t.Fatalf("%d trades", mc.Steps)
	}
	if mc.LossProbability != 0 || mc.TotalReturn.P5 <= 0 || mc.MaxDrawdown.P95 != 0 {
		t.Errorf("loss probability %v, total return %+v, drawdown %+v", mc.LossProbability, mc.TotalReturn, mc.MaxDrawdown)
	}
	// The realised return: the trades' P&L over the start equity.
	var sum float64
	rep := e.Run("status", id, "--output", "json")
	var report struct {
		Metrics struct {
			StartEquity float64 `json:"start_equity"`
		} `json:"metrics"`
	}
	json.Unmarshal([]byte(rep.Stdout), &report)
	rec := e.openRecord(id, job.RecordTrades)
	trades, _ := io.ReadAll(rec)
	rec.Close()
	for _, line := range strings.Split(strings.TrimSpace(string(trades)), "\n")[1:] {
		f := strings.Split(line, ",")
		var pnl float64
		fmt.Sscan(f[11], &pnl)
		sum += pnl
	}
	if want := sum / report.Metrics.StartEquity; math.Abs(float64(mc.TotalReturn.P50)-want) > 1e-9 || math.Abs(float64(mc.Observed.TotalReturn)-want) > 1e-9 {
		t.Errorf("total return %v (observed %v), want the realised %v", mc.TotalReturn.P50, mc.Observed.TotalReturn, want)
	}
}

// TestMonteCarloInTheJobReport: once a Monte Carlo is kept, the job's
// report draws its fan and lists its percentiles.
func TestMonteCarloInTheJobReport(t *testing.T) {
	e := newEnv(t)
	b := browsertest.Start(t)
	id := runJob(t, e, e2etest.SweepStrategy, "--to", "2026-01-06")
	r := e.Run("report", id)
	if r.Code != 0 {
		t.Fatalf("report: exit %d\n%s", r.Code, r.Stderr)
	}
	page, _ := os.ReadFile(reportPath(t, r.Stdout))
	if strings.Contains(string(page), `id="montecarlo"`) {
		t.Fatal("a Monte Carlo section before any Monte Carlo")
	}
	mc := monteCarlo(t, e, id, "--method", "bootstrap", "--runs", "200")
	r = e.Run("report", id)
	if r.Code != 0 {
		t.Fatalf("report: exit %d\n%s", r.Code, r.Stderr)
	}
	p := openReport(t, b, reportPath(t, r.Stdout), []string{"fan"}, "")
	table := evalString(t, p, `document.getElementById('montecarlo-table').textContent`)
	if !strings.Contains(table, "total return") || !strings.Contains(table, "max drawdown") {
		t.Errorf("the table: %q", table)
	}
	if got := evalString(t, p, `document.getElementById('loss-probability').textContent`); got == "" {
		t.Error("no probability of a loss")
	}
	n := evalString(t, p, `String(document.querySelectorAll('#chart-fan canvas').length)`)
	if n == "0" {
		t.Error("the fan is not drawn")
	}
	_ = mc
}
