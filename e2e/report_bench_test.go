package e2e

// The HTML report's size and speed (docs/BENCHMARKS.md): writing the
// report of a 1,000,000-bar job, the size of a 10,000-run sweep's, and the
// time until the 1M-bar report is drawn in headless Chromium, with the
// same charts drawn as SVG for comparison (docs/ARCHITECTURE.md). Run it
// with STRATBENCH_REPORT_BENCH=1 (it takes a few minutes):
//
//	STRATBENCH_REPORT_BENCH=1 go test -run TestReportBench -v -timeout 30m ./e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"stratbench/internal/browsertest"
	"stratbench/internal/e2etest"
	"stratbench/metrics"
	"stratbench/sweep"
	"stratbench/tearsheet"
)

func TestReportBench(t *testing.T) {
	if os.Getenv("STRATBENCH_REPORT_BENCH") == "" {
		t.Skip("set STRATBENCH_REPORT_BENCH=1 to measure the reports")
	}
	e := newEnv(t)
	dir := t.TempDir()
	bars := filepath.Join(dir, "bars.csv")
	if out, err := exec.Command("python3", "bench/gen_bars.py", "1000000", bars).CombinedOutput(); err != nil {
		t.Fatalf("gen_bars: %v\n%s", err, out)
	}
	start := time.Now()
	r := e.Run("--ci", e2etest.SweepStrategy, "--data", bars, "--param", "fast=10", "--param", "slow=30", "--output", "json")
	if r.Code != 0 {
		t.Fatalf("the 1M-bar job: exit %d\n%s", r.Code, r.Stderr)
	}
	rep := e2etest.DecodeReport(t, r.Stdout)
	t.Logf("the 1M-bar job ran in %s: %d events, %d fills, %d trades", time.Since(start).Round(time.Millisecond), rep.Metrics.Events, rep.Metrics.Fills, rep.Metrics.Trades)

	// Writing the report, through the command, best of three.
	// The machine is shared: the CPU time the command took is the
	// figure that does not depend on what else runs.
	var best, cpu time.Duration
	var path string
	for range 3 {
		cmd := e.Command("report", rep.JobID)
		start := time.Now()
		out, err := cmd.Output()
		took := time.Since(start)
		if err != nil {
			t.Fatalf("report: %v", err)
		}
		path = strings.TrimSpace(string(out))
		if best == 0 || took < best {
			best = took
		}
		if c := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(); cpu == 0 || c < cpu {
			cpu = c
		}
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("BENCH report-1M-write: %s wall, %s CPU, %.2f MB (%d bytes)", best.Round(time.Millisecond), cpu.Round(time.Millisecond), float64(info.Size())/1e6, info.Size())
	if cpu > 2*time.Second || info.Size() > 5<<20 {
		t.Errorf("the 1M-bar report: %s of CPU and %d bytes, want at most 2 s and 5 MB", cpu, info.Size())
	}

	// Until drawn in Chromium, uPlot against the same points as SVG.
	b := browsertest.Start(t)
	svgPath := filepath.Join(dir, "svg.html")
	svgSize := writeSVGPage(t, path, svgPath)
	onlyPath := filepath.Join(dir, "uplot-only.html")
	writeChartsOnlyPage(t, path, onlyPath)
	for _, page := range []struct{ name, path string }{{"report", path}, {"uplot-charts-only", onlyPath}, {"svg", svgPath}} {
		var times []time.Duration
		for range 3 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			p, err := b.NewPage(ctx, 1400, 1000)
			if err != nil {
				t.Fatal(err)
			}
			took, err := p.Load(ctx, "file://"+page.path, ready)
			if err != nil {
				t.Fatal(err)
			}
			draw, _ := p.Eval(ctx, `document.body.dataset.drawMs || "0"`)
			cancel()
			times = append(times, took)
			t.Logf("%s: loaded and drawn in %s, of which the script %s ms", page.name, took.Round(time.Millisecond), draw)
		}
		t.Logf("BENCH report-1M-drawn-%s: best %s", page.name, minDuration(times).Round(time.Millisecond))
	}
	t.Logf("BENCH svg page: %.2f MB of SVG for the same points", float64(svgSize)/1e6)

	// A 10,000-run sweep's report (a document made here: 10,000 runs of
	// a 100 × 100 grid, one in ten failed with a message, five best
	// curves of 20,000 points).
	doc, s := syntheticSweep(10_000)
	var buf bytes.Buffer
	start = time.Now()
	if err := tearsheet.WriteSweep(&buf, s, tearsheet.Options{Version: "bench"}); err != nil {
		t.Fatal(err)
	}
	t.Logf("BENCH report-sweep-10k: %s, %.2f MB (%d runs)", time.Since(start).Round(time.Millisecond), float64(buf.Len())/1e6, len(doc.Runs))
	if buf.Len() > 10<<20 {
		t.Errorf("the 10,000-run sweep's report is %d bytes, want at most 10 MB", buf.Len())
	}
	sweepPath := filepath.Join(dir, "sweep.html")
	os.WriteFile(sweepPath, buf.Bytes(), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := b.NewPage(ctx, 1400, 1000)
	if err != nil {
		t.Fatal(err)
	}
	took, err := p.Load(ctx, "file://"+sweepPath, ready)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("BENCH report-sweep-10k-drawn: %s", took.Round(time.Millisecond))
}

// writeChartsOnlyPage writes the report at path with its data cut to the
// series the SVG page draws (no trade list, no fills): uPlot against SVG
// on the same points.
func writeChartsOnlyPage(t *testing.T, path, out string) {
	t.Helper()
	html, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	open := []byte(`<script type="application/json" id="data">`)
	i := bytes.Index(html, open) + len(open)
	j := i + bytes.Index(html[i:], []byte("</script>"))
	var data map[string]any
	if err := json.Unmarshal(html[i:j], &data); err != nil {
		t.Fatal(err)
	}
	job := data["job"].(map[string]any)
	delete(job, "trades")
	delete(job, "hist")
	for _, p := range job["prices"].([]any) {
		pm := p.(map[string]any)
		pm["fill_t"], pm["fill_p"], pm["fill_buy"] = []any{}, []any{}, []any{}
	}
	cut, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	page := append(append(append([]byte{}, html[:i]...), cut...), html[j:]...)
	if err := os.WriteFile(out, page, 0o644); err != nil {
		t.Fatal(err)
	}
}

func minDuration(d []time.Duration) time.Duration {
	m := d[0]
	for _, x := range d {
		m = min(m, x)
	}
	return m
}

// writeSVGPage writes a page that draws, as inline SVG polylines, every
// series the report at path draws with uPlot (no axes, no interaction:
// the least an SVG drawing would hold), and returns its size.
func writeSVGPage(t *testing.T, path, out string) int {
	t.Helper()
	html, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(html, []byte(`<script type="application/json" id="data">`))
	j := bytes.Index(html[i:], []byte("</script>"))
	var data struct {
		Job struct {
			Equity, Drawdown, Rolling *struct {
				T []float64    `json:"t"`
				Y [][]*float64 `json:"y"`
			}
			Prices []struct {
				T     []float64  `json:"t"`
				Close []*float64 `json:"close"`
			}
		} `json:"job"`
	}
	if err := json.Unmarshal(html[i+len(`<script type="application/json" id="data">`):i+j], &data); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html><head><meta charset=utf-8><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'\"></head><body>")
	poly := func(ts []float64, ys []*float64) {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, y := range ys {
			if y != nil {
				lo, hi = min(lo, *y), max(hi, *y)
			}
		}
		b.WriteString(`<svg width="1300" height="280" viewBox="0 0 1300 280"><polyline fill="none" stroke="#2f6fde" points="`)
		t0, t1 := ts[0], ts[len(ts)-1]
		for k, y := range ys {
			if y == nil {
				continue
			}
			x := (ts[k] - t0) / (t1 - t0) * 1300
			yy := 280 - (*y-lo)/(hi-lo)*280
			b.WriteString(strconv.FormatFloat(x, 'f', 1, 64) + "," + strconv.FormatFloat(yy, 'f', 1, 64) + " ")
		}
		b.WriteString(`"/></svg>`)
	}
	for _, s := range []*struct {
		T []float64    `json:"t"`
		Y [][]*float64 `json:"y"`
	}{data.Job.Equity, data.Job.Equity, data.Job.Drawdown, data.Job.Rolling} {
		if s != nil {
			for _, y := range s.Y {
				poly(s.T, y)
			}
		}
	}
	for _, p := range data.Job.Prices {
		poly(p.T, p.Close)
	}
	b.WriteString(`<script>document.body.dataset.ready = "1"</script></body></html>`)
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return b.Len()
}

// syntheticSweep makes the document and the curves of a sweep of n runs.
func syntheticSweep(n int) (*sweep.Document, *tearsheet.Sweep) {
	rng := rand.New(rand.NewPCG(1, 2))
	side := int(math.Ceil(math.Sqrt(float64(n))))
	grid := sweep.Grid{{Name: "fast"}, {Name: "slow"}}
	for i := range side {
		grid[0].Values = append(grid[0].Values, int64(i+1))
		grid[1].Values = append(grid[1].Values, int64(i+10))
	}
	doc := &sweep.Document{SweepID: "sw-20261206-000000.000-bench", Status: sweep.StatusFailed,
		Strategy: sweep.StrategyRef{Path: "/bench/strategy.py", SHA256: strings.Repeat("a", 64)},
		Data:     sweep.DataRef{Source: "bench.csv", From: "2024-01-01T00:00:00Z", To: "2025-11-26T10:39:00Z", Fingerprint: strings.Repeat("b", 64)},
		Spec:     sweep.SpecDoc{Grid: grid, Params: sweep.Params{}, Metric: "sharpe", Jobs: 2}, StartedAt: time.Now()}
	s := &tearsheet.Sweep{Doc: doc, Messages: map[string]string{}}
	for i := range n {
		res := sweep.Result{Index: int64(i), Params: sweep.Params{{Name: "fast", Value: int64(i/side + 1)}, {Name: "slow", Value: int64(i%side + 10)}},
			JobID: fmt.Sprintf("20261206-000000.000-%04x", i), Status: sweep.RunPassed, Fingerprint: strings.Repeat("c", 64),
			OrdersHash: strings.Repeat("d", 64), DurationMS: int64(300 + rng.IntN(200))}
		if i%10 == 9 {
			res.Status, res.FailureKind = sweep.RunFailed, "exception"
			s.Messages[res.JobID] = fmt.Sprintf("ValueError: fast=%d is the combination that fails at event %d of the run", i/side+1, rng.IntN(1_000_000))
		}
		m := map[string]any{"start_equity": 100000, "final_equity": 100000 * (1 + rng.NormFloat64()*0.1), "final_cash": 90000.5,
			"positions": map[string]float64{}, "total_return": rng.NormFloat64() * 0.1, "cagr": rng.NormFloat64(), "volatility": rng.Float64(),
			"sharpe": rng.NormFloat64() * 2, "sortino": rng.NormFloat64() * 3, "calmar": rng.NormFloat64(), "max_drawdown": rng.Float64() * 0.3,
			"max_drawdown_duration_s": rng.Float64() * 1e6, "fills": rng.IntN(60000), "rejections": 0, "cancels": 0, "open_orders": 0,
			"trades": rng.IntN(30000), "win_rate": rng.Float64(), "profit_factor": rng.Float64() * 2, "expectancy": rng.NormFloat64(),
			"fees": 0, "exposure": rng.Float64(), "buy_and_hold_return": 0.12, "warmup_bars": 30, "events": 1000000,
			"bar_interval_s": 60, "periods_per_year": 525960}
		res.Metrics, _ = json.Marshal(m)
		doc.Runs = append(doc.Runs, res)
	}
	doc.Retally(doc.Runs)
	for k := range 5 {
		c := metrics.Curve{}
		v := 100000.0
		for i := range 20000 {
			v *= 1 + rng.NormFloat64()*0.001
			c.Times = append(c.Times, int64(1704067200+i*60)*1e9)
			c.Equity = append(c.Equity, v)
		}
		s.Best = append(s.Best, tearsheet.RunCurve{Index: int64(k), Params: "fast=1, slow=10", Curve: c})
	}
	return doc, s
}
