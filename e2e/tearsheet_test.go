package e2e

// The HTML reports (docs/report.md) of real runs through the binary,
// loaded in a real headless Chromium with the network off
// (internal/browsertest): no console error, no request, every chart drawn;
// nothing a strategy controls runs in its report; the metrics agree with
// quantstats and with a hand computation of the trades.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"stratbench/internal/browsertest"
	"stratbench/internal/e2etest"
	"stratbench/internal/testenv"
	"stratbench/internal/units"
	"stratbench/job"
	"stratbench/metrics"
	"stratbench/tearsheet"
)

var updateReportPNG = flag.Bool("update-report-png", false, "write docs/report.png from the screenshot of TestJobReportInBrowser")

// ready waits in the page until the report's script has drawn everything
// (it sets data-ready on the body), and one more frame has been painted.
// A page whose script never gets there (markup that broke the page) gives
// 0 after 20 s, a deadline rather than a wait.
const ready = `new Promise(r => { setTimeout(() => r(0), 20000); const f = () => (document.body && document.body.dataset.ready) ? requestAnimationFrame(() => r(1)) : requestAnimationFrame(f); f(); })`

// chartsInPage describes every element the report drew into: whether the
// script marked it drawn, its canvas (uPlot's) and how much of it is
// inked (sampled), and its table cells.
const chartsInPage = `(() => [...document.querySelectorAll('[data-chart]')].map(n => {
  const c = n.querySelector('canvas'); let inked = 0;
  if (c && c.width > 0 && c.height > 0) { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    for (let i = 3; i < d.length; i += 4 * 7) if (d[i]) inked++; }
  return {id: n.id, kind: n.dataset.chart, drawn: n.dataset.drawn === '1', canvas: !!c, inked, cells: n.querySelectorAll('td').length};
}))()`

type drawnChart struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Drawn  bool   `json:"drawn"`
	Canvas bool   `json:"canvas"`
	Inked  int    `json:"inked"`
	Cells  int    `json:"cells"`
}

// openReport loads the report at path in b and checks what every report
// must hold: no console error, no request but the file itself, every
// chart and table drawn and not empty, the charts listed in want among
// them. It writes a screenshot to the test's artifact folder (and to
// shot, when not empty) and returns the page.
func openReport(t *testing.T, b *browsertest.Browser, path string, want []string, shot string) *browsertest.Page {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := b.NewPage(ctx, 1400, 1000)
	if err != nil {
		t.Fatal(err)
	}
	url := "file://" + path
	if _, err := p.Load(ctx, url, ready); err != nil {
		t.Fatal(err)
	}
	if done := evalString(t, p, `String(document.body.dataset.ready || "")`); done != "1" {
		t.Errorf("%s: the page's script did not finish drawing", filepath.Base(path))
	}
	if errs := p.Errors(); len(errs) > 0 {
		t.Errorf("%s: console errors:\n%s", filepath.Base(path), strings.Join(errs, "\n"))
	}
	for _, r := range p.Requests() {
		if r != url {
			t.Errorf("%s requested %s", filepath.Base(path), r)
		}
	}
	raw, err := p.Eval(ctx, chartsInPage)
	if err != nil {
		t.Fatal(err)
	}
	var charts []drawnChart
	if err := json.Unmarshal(raw, &charts); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range charts {
		seen[c.Kind] = true
		switch {
		case !c.Drawn:
			t.Errorf("%s: %s (%s) was not drawn", filepath.Base(path), c.ID, c.Kind)
		case c.Canvas && c.Inked < 200:
			t.Errorf("%s: %s (%s) is blank: %d inked pixels sampled", filepath.Base(path), c.ID, c.Kind, c.Inked)
		case !c.Canvas && c.Cells == 0 && c.Kind != "equity-log":
			t.Errorf("%s: %s (%s) is empty", filepath.Base(path), c.ID, c.Kind)
		}
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("%s has no %s chart (it has %v)", filepath.Base(path), w, charts)
		}
	}
	name := strings.TrimSuffix(filepath.Base(path), ".html") + ".png"
	if err := p.Screenshot(ctx, filepath.Join(t.ArtifactDir(), name), 6000); err != nil {
		t.Fatal(err)
	}
	if shot != "" {
		if err := p.Screenshot(ctx, shot, 2400); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// evalString evaluates expr in p as a string.
func evalString(t *testing.T, p *browsertest.Page, expr string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw, err := p.Eval(ctx, expr)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: %s is not a string", expr, raw)
	}
	return s
}

// reportPath is the path the report command printed, checked to exist.
func reportPath(t *testing.T, out string) string {
	t.Helper()
	path := strings.TrimSpace(out)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the report's path %q: %v", path, err)
	}
	return path
}

// TestJobReportInBrowser: --ci --report writes the report of the run into
// the job's folder; every section is there, every chart drawn, and its
// screenshot is the README's picture (-update-report-png).
func TestJobReportInBrowser(t *testing.T) {
	e := newEnv(t)
	b := browsertest.Start(t)
	r := e.Run("--ci", "python/example/strategy.py", "--report", "--output", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	rep := e2etest.DecodeReport(t, r.Stdout)
	path := filepath.Join(e.Home, "jobs", rep.JobID, "report.html")
	if !strings.Contains(r.Stderr, "report: "+path) {
		t.Errorf("stderr does not name %s:\n%s", path, r.Stderr)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() > 2<<20 {
		t.Errorf("the report of the bundled week is %d bytes", info.Size())
	}
	shot := ""
	if *updateReportPNG {
		shot = filepath.Join(testenv.Root(t), "docs", "report.png")
	}
	p := openReport(t, b, path, []string{"equity", "equity-log", "drawdown", "heatmap", "hist", "rolling", "price", "trades"}, shot)
	// The report's own numbers, as the text report shows them.
	page := evalString(t, p, `document.getElementById('metrics').textContent`)
	for _, want := range []string{"sharpe", "cagr", "Ulcer index", "SQN", "periods per year", "VaR 95 %"} {
		if !strings.Contains(page, want) {
			t.Errorf("the metrics lack %q", want)
		}
	}
	// Two price charts (two symbols), each with its fills.
	if n := evalString(t, p, `String(document.querySelectorAll('.chart.price canvas').length)`); n != "2" {
		t.Errorf("%s price charts, want 2", n)
	}
	// The trade list is paged and sorts.
	before := evalString(t, p, `document.querySelector('#trade-table tbody td:nth-child(10)').textContent`)
	after := evalString(t, p, `(() => { const th = document.querySelectorAll('#trade-table th')[9]; th.click(); return document.querySelector('#trade-table tbody td:nth-child(10)').textContent; })()`)
	if before == after {
		t.Errorf("sorting by P&L left the first row's P&L at %s", before)
	}
	if pager := evalString(t, p, `document.getElementById('trade-pager').textContent`); !strings.Contains(pager, "page 1 of") {
		t.Errorf("the pager says %q", pager)
	}
}

// TestFailedJobReportAndInjection: a strategy that puts markup, script
// and terminal escapes into its params, output, artifact names, metadata
// and failure gets reports in which none of it runs (the page's title and
// window.__pwned stay untouched) and all of it is shown as text; the
// failed run's report says first what failed, with the traceback, and
// draws the events before it.
func TestFailedJobReportAndInjection(t *testing.T) {
	e := newEnv(t)
	b := browsertest.Start(t)
	script := "testdata/attacks/report_injection.py"
	for _, fail := range []string{"true", "false"} {
		out := filepath.Join(t.TempDir(), "injection-fail-"+fail+".html")
		r := e.Run("--ci", script, "--to", "2026-01-05 06:00:00", "--param", "fail="+fail, "--report="+out)
		if want := map[string]int{"true": 1, "false": 0}[fail]; r.Code != want {
			t.Fatalf("fail=%s: exit %d\n%s", fail, r.Code, r.Stderr)
		}
		want := []string{"equity", "drawdown", "price", "trades"}
		p := openReport(t, b, out, want, "")
		if title := evalString(t, p, `document.title`); strings.Contains(title, "pwned") || !strings.HasPrefix(title, "job ") {
			t.Errorf("fail=%s: the page's title is %q", fail, title)
		}
		if v := evalString(t, p, `String(window.__pwned)`); v != "undefined" {
			t.Errorf("fail=%s: the injected script ran: window.__pwned = %s", fail, v)
		}
		if n := evalString(t, p, `String(document.querySelectorAll('main script, main img:not(.artifact), main iframe').length)`); n != "0" {
			t.Errorf("fail=%s: %s elements from the strategy's text", fail, n)
		}
		// The text is there, as text: in the header, the log, the
		// artifacts, and the metadata or the failure.
		text := evalString(t, p, `document.querySelector('main').innerText`)
		payload := "</script><script>document.title='pwned';window.__pwned=1</script><!--"
		if c := strings.Count(text, payload); c < 3 {
			t.Errorf("fail=%s: the payload shows %d times as text, want 3 or more", fail, c)
		}
		if strings.Contains(text, "\x1b") {
			t.Errorf("fail=%s: a terminal escape reached the page", fail)
		}
		if n := evalString(t, p, `String(document.querySelectorAll('img.artifact').length)`); n != "0" {
			t.Errorf("fail=%s: %s artifact images shown: the .png is HTML", fail, n)
		}
		if fail == "false" {
			continue
		}
		// What failed comes first, with the traceback.
		order := evalString(t, p, `[...document.querySelectorAll('main section, main .failure')].map(n => n.id).join(',')`)
		if !strings.HasPrefix(order, "summary,failure,metrics") {
			t.Errorf("the sections are %s: the failure is not first", order)
		}
		tb := evalString(t, p, `document.querySelector('#failure .traceback').textContent`)
		if !strings.Contains(tb, "RuntimeError: failed on purpose") || !strings.Contains(tb, "report_injection.py") {
			t.Errorf("the traceback:\n%s", tb)
		}
		if at := evalString(t, p, `document.querySelector('#failure p').textContent`); !strings.Contains(at, "at event 199") {
			t.Errorf("the failure says %q", at)
		}
	}
}

// TestSweepReportInBrowser: a sweep with failed runs: every run in the
// table with its kind and message, the heatmap of the objective chosen in
// the page, the best runs' curves; a place for the robustness block, and
// the block itself when the document has one.
func TestSweepReportInBrowser(t *testing.T) {
	e := newEnv(t)
	b := browsertest.Start(t)
	r := e.Run("sweep", e2etest.SweepStrategy, "--ci", "--output", "json", "--to", "2026-01-06", "--grid", "fast=5,10,15", "--grid", "slow=20,30",
		"--param", "fail_at=10")
	if r.Code != 1 {
		t.Fatalf("the sweep: exit %d (want 1: two runs fail)\n%s", r.Code, r.Stderr)
	}
	id := e2etest.DecodeSweep(t, r.Stdout).SweepID
	r = e.Run("report", id[len(id)-4:])
	if r.Code != 0 {
		t.Fatalf("report: exit %d\n%s", r.Code, r.Stderr)
	}
	path := reportPath(t, r.Stdout)
	if want := filepath.Join(e.Home, "sweeps", id, "report.html"); path != want {
		t.Errorf("report wrote %s, want %s", path, want)
	}
	p := openReport(t, b, path, []string{"runs", "sweep-heat", "curves", "lambdas"}, "")
	runs := evalString(t, p, `[...document.querySelectorAll('#run-table tbody tr')].map(r => r.textContent).join('\n')`)
	if n := strings.Count(runs, "\n") + 1; n != 6 {
		t.Errorf("%d runs in the table, want 6:\n%s", n, runs)
	}
	if c := strings.Count(runs, "fast=10 is the combination that fails"); c != 2 {
		t.Errorf("%d failed runs' messages, want 2:\n%s", c, runs)
	}
	if c := strings.Count(runs, "exception"); c != 2 {
		t.Errorf("%d failed runs' kinds, want 2", c)
	}
	// The filter keeps the failed ones.
	got := evalString(t, p, `(() => { const s = document.getElementById('run-status'); s.value = 'failed'; s.dispatchEvent(new Event('change')); return document.getElementById('run-count').textContent; })()`)
	if got != "2 of 6 runs" {
		t.Errorf("filtering the failed runs: %q", got)
	}
	// The heatmap: fast × slow, the failed fast=10 empty, values in cells.
	heat := evalString(t, p, `[...document.querySelectorAll('#sweep-heat tr')].map(r => [...r.children].map(c => c.textContent).join('|')).join('\n')`)
	lines := strings.Split(heat, "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[2], "10||") {
		t.Errorf("the heatmap:\n%s", heat)
	}
	if !regexp.MustCompile(`^5\|-?[0-9.,]+\|-?[0-9.,]+$`).MatchString(lines[1]) {
		t.Errorf("the heatmap's first row %q has no values", lines[1])
	}
	// The robustness block the sweep computed: its verdict, its figures.
	if place := evalString(t, p, `document.getElementById('robustness').textContent`); !regexp.MustCompile(
		`How far to trust the best run: (likely overfit|inconclusive|likely real) .*deflated_sharpe[0-9.]+pbo[0-9.]+`).MatchString(place) {
		t.Errorf("the robustness section: %q", place)
	}

	// A document of a version without the block: a place for it.
	docPath := filepath.Join(e.Home, "sweeps", id, "sweep.json")
	raw, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "robustness")
	delete(doc, "robustness_reason")
	raw, _ = json.Marshal(doc)
	if err := os.WriteFile(docPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.Run("report", id); r.Code != 0 {
		t.Fatalf("report: exit %d\n%s", r.Code, r.Stderr)
	}
	p = openReport(t, b, path, []string{"runs"}, "")
	if place := evalString(t, p, `document.getElementById('robustness').textContent`); !strings.Contains(place, "no robustness statistics") {
		t.Errorf("the robustness section of an older document: %q", place)
	}

	// A document with the robustness block shows it.
	doc["robustness"] = map[string]any{"trials": 4, "best_psr": 0.91, "deflated_sharpe": 0.42, "pbo": 0.375, "blocks": 16,
		"combinations": 12870, "oos_loss_probability": 0.25}
	raw, _ = json.Marshal(doc)
	if err := os.WriteFile(docPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "robust.html")
	if r := e.Run("report", id, "--out", out); r.Code != 0 || reportPath(t, r.Stdout) != out {
		t.Fatalf("report --out: exit %d %q\n%s", r.Code, r.Stdout, r.Stderr)
	}
	p = openReport(t, b, out, []string{"runs"}, "")
	table := evalString(t, p, `document.getElementById('robustness-table').textContent`)
	for _, want := range []string{"deflated_sharpe0.42", "pbo0.38", "trials4", "oos_loss_probability0.25"} {
		if !strings.Contains(table, want) {
			t.Errorf("the robustness table %q lacks %q", table, want)
		}
	}
}

// TestWalkForwardReportInBrowser: the folds with their windows, params and
// figures, the stitched out-of-sample curve and the efficiency, as the
// sweep document has them.
func TestWalkForwardReportInBrowser(t *testing.T) {
	e := newEnv(t)
	b := browsertest.Start(t)
	r := e.Run("sweep", e2etest.SweepStrategy, "--ci", "--output", "json", "--grid", "fast=5,10", "--walk-forward", "train=2d,test=1d")
	if r.Code != 0 {
		t.Fatalf("the sweep: exit %d\n%s", r.Code, r.Stderr)
	}
	doc := e2etest.DecodeSweep(t, r.Stdout)
	r = e.Run("report", "sw-latest")
	if r.Code != 0 {
		t.Fatalf("report: exit %d\n%s", r.Code, r.Stderr)
	}
	p := openReport(t, b, reportPath(t, r.Stdout), []string{"curves", "runs", "sweep-heat"}, "")
	folds := evalString(t, p, `[...document.querySelectorAll('#folds tbody tr')].map(r => r.textContent).join('\n')`)
	if n := strings.Count(folds, "\n") + 1; n != 5 {
		t.Errorf("%d folds, want 5:\n%s", n, folds)
	}
	for _, f := range doc.WalkForward.Folds {
		if !strings.Contains(folds, f.Test.String()) || !strings.Contains(folds, f.BestParams.String()) {
			t.Errorf("fold %s (%s) is not in the table:\n%s", f.Test, f.BestParams, folds)
		}
	}
	want := "–" // null: some in-sample return is not above 0
	if e := doc.WalkForward.Efficiency; e != nil {
		want = units.Number(*e)
	}
	if eff := evalString(t, p, `document.getElementById('efficiency').textContent`); eff != want {
		t.Errorf("efficiency %q, want %q (the document's %v)", eff, want, doc.WalkForward.Efficiency)
	}
	// The stitched curve ends at the document's stitched final equity.
	end := evalString(t, p, `(() => { const d = JSON.parse(document.getElementById('data').textContent).sweep.curves; const y = d.y[0]; return String(y[y.length - 1]); })()`)
	var got float64
	fmt.Sscan(end, &got)
	if want := doc.WalkForward.OutOfSample.FinalEquity; math.Abs(got-want) > 1e-6*want {
		t.Errorf("the stitched curve ends at %v, the document's final equity is %v", got, want)
	}
}

// TestReportCommand: the ids report takes, where it writes, and --open
// (its errors: testdata/script/report_refusals.txtar).
func TestReportCommand(t *testing.T) {
	e := newEnv(t)
	r := e.Run("--ci", e2etest.Strategy("ok_counter.py"), "--to", "2026-01-05 01:00:00")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	jobs, err := job.OpenStore(e.Home)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := jobs.IDs()
	id := ids[0]
	for _, typed := range []string{id, "latest", id[len(id)-4:], id[:15]} {
		r := e.Run("report", typed)
		if r.Code != 0 || strings.TrimSpace(r.Stdout) != filepath.Join(e.Home, "jobs", id, "report.html") {
			t.Errorf("report %s: exit %d, %q\n%s", typed, r.Code, r.Stdout, r.Stderr)
		}
	}
	// --open hands the file to $BROWSER, no shell between.
	dir := t.TempDir()
	opened := filepath.Join(dir, "opened")
	browser := filepath.Join(dir, "browser")
	if err := os.WriteFile(browser, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > "+opened+".tmp && mv "+opened+".tmp "+opened+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "a report; touch pwned.html")
	cmd := e.Command("report", "latest", "--out", out, "--open")
	cmd.Env = append(cmd.Env, "BROWSER=/nonexistent/browser:"+browser)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("report --open: %v\n%s", err, b)
	}
	// The browser was started and left running: wait for what it writes.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(opened); err == nil {
			if strings.TrimSpace(string(b)) != out {
				t.Errorf("the browser got %q, want %q", b, out)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the browser was not started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned.html")); err == nil {
		t.Error("the path went through a shell")
	}
	// --report PATH before the strategy, as the README writes it.
	out = filepath.Join(dir, "ci.html")
	if r := e.Run("--ci", "--report", out, e2etest.Strategy("ok_counter.py"), "--to", "2026-01-05 00:10:00"); r.Code != 0 || !strings.Contains(r.Stderr, "report: "+out) {
		t.Errorf("--ci --report PATH STRATEGY: exit %d\n%s", r.Code, r.Stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Error(err)
	}
}

// TestReportMetricsAgreeWithQuantstats: every figure of the report that
// quantstats also computes agrees with quantstats 0.0.86 on the same
// returns and periods per year, with a zero risk-free rate, to 1e-9
// relative: the job report's own (cagr, volatility, sharpe, sortino,
// calmar, max_drawdown) and those the HTML report computes (metrics/);
// the trade figures agree with a hand computation from trades.csv.
func TestReportMetricsAgreeWithQuantstats(t *testing.T) {
	e := newEnv(t)
	py := testenv.Python(t, "quantstats", "pandas")
	r := e.Run("--ci", e2etest.SweepStrategy, "--output", "json", "--param", "fast=5", "--param", "slow=20")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	rep := e2etest.DecodeReport(t, r.Stdout)
	f := e.openRecord(rep.JobID, job.RecordEquity)
	eq, err := tearsheet.ReadEquity(f, rep.Metrics.StartEquity)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	c := eq.Curve
	ppy := rep.Metrics.PeriodsPerYear
	if got := c.PeriodsPerYear(); !agree(got, ppy) {
		t.Errorf("periods per year from the curve %v, the report's %v", got, ppy)
	}
	returns := c.Returns()
	times := make([]float64, len(returns))
	for i := range times {
		times[i] = float64(c.Times[i+1]) / 1e9
	}
	window := metrics.RollingWindow(len(returns), ppy)
	spec, _ := json.Marshal(map[string]any{"times": times, "returns": returns, "periods": ppy, "window": window,
		// pandas.read_csv reads the compressed record as it is.
		"trades": filepath.Join(e.Home, "jobs", rep.JobID, job.RecordsDir, job.RecordTrades.FileName())})
	specPath := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(specPath, spec, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "testdata/report/check_metrics.py", specPath).Output()
	if err != nil {
		t.Fatalf("check_metrics.py: %v", err)
	}
	var qs struct {
		CAGR, Volatility, Sharpe, Sortino, Calmar, MaxDrawdown, Ulcer, Skew, Kurtosis, VaR95, CVaR95, Best, Worst float64
		Rolling                                                                                                   []*float64 `json:"rolling_sharpe"`
		Monthly                                                                                                   []float64
		Trades                                                                                                    map[string]float64
	}
	fields := map[string]*float64{}
	var generic map[string]json.RawMessage
	json.Unmarshal(out, &generic)
	for k, p := range map[string]*float64{"cagr": &qs.CAGR, "volatility": &qs.Volatility, "sharpe": &qs.Sharpe, "sortino": &qs.Sortino,
		"calmar": &qs.Calmar, "max_drawdown": &qs.MaxDrawdown, "ulcer": &qs.Ulcer, "skew": &qs.Skew, "kurtosis": &qs.Kurtosis,
		"var95": &qs.VaR95, "cvar95": &qs.CVaR95, "best": &qs.Best, "worst": &qs.Worst} {
		if err := json.Unmarshal(generic[k], p); err != nil {
			t.Fatalf("%s: %s", k, generic[k])
		}
		fields[k] = p
	}
	json.Unmarshal(generic["rolling_sharpe"], &qs.Rolling)
	json.Unmarshal(generic["monthly"], &qs.Monthly)
	json.Unmarshal(generic["trades"], &qs.Trades)

	per := metrics.PeriodStats(c, ppy)
	m := rep.Metrics
	check := func(name string, got, want float64) {
		t.Helper()
		if !agree(got, want) {
			t.Errorf("%s: %.17g, quantstats %.17g (relative %.2g)", name, got, want, math.Abs(got-want)/math.Abs(want))
		}
	}
	// The job report's own figures (the HTML report shows these).
	check("report cagr", m.CAGR, qs.CAGR)
	check("report volatility", m.Volatility, qs.Volatility)
	check("report sharpe", m.Sharpe, qs.Sharpe)
	check("report sortino", m.Sortino, qs.Sortino)
	check("report calmar", m.Calmar, qs.Calmar)
	check("report max_drawdown", m.MaxDrawdown, qs.MaxDrawdown)
	// The same from metrics/, and what only the HTML report shows.
	for name, pair := range map[string][2]float64{"cagr": {per.CAGR, qs.CAGR}, "volatility": {per.Volatility, qs.Volatility},
		"sharpe": {per.Sharpe, qs.Sharpe}, "sortino": {per.Sortino, qs.Sortino}, "calmar": {per.Calmar, qs.Calmar},
		"max_drawdown": {per.MaxDrawdown, qs.MaxDrawdown}, "ulcer": {per.Ulcer, qs.Ulcer}, "skew": {per.Skew, qs.Skew},
		"kurtosis": {per.Kurtosis, qs.Kurtosis}, "var95": {per.VaR95, qs.VaR95}, "cvar95": {per.CVaR95, qs.CVaR95},
		"best": {per.Best, qs.Best}, "worst": {per.Worst, qs.Worst}} {
		check("metrics "+name, pair[0], pair[1])
	}
	roll := metrics.RollingSharpe(returns, window, ppy)
	if len(roll) != len(qs.Rolling) {
		t.Fatalf("%d rolling Sharpe values, quantstats %d", len(roll), len(qs.Rolling))
	}
	checked := 0
	for i, want := range qs.Rolling {
		switch {
		case want == nil && !math.IsNaN(roll[i]):
			t.Fatalf("rolling Sharpe %d: %v, quantstats none", i, roll[i])
		case want != nil && !agree(roll[i], *want):
			t.Fatalf("rolling Sharpe %d: %.17g, quantstats %.17g", i, roll[i], *want)
		case want != nil:
			checked++
		}
	}
	if checked < len(returns)/2 {
		t.Errorf("only %d rolling Sharpe values compared", checked)
	}
	monthly := metrics.Daily(c) // the bundled data spans one week: by day
	if len(metrics.Monthly(c)) != len(qs.Monthly) {
		t.Errorf("%d months, quantstats %d", len(metrics.Monthly(c)), len(qs.Monthly))
	}
	for i, mo := range metrics.Monthly(c) {
		check(fmt.Sprintf("month %d", i), mo.Return, qs.Monthly[i])
	}
	if len(monthly) < 5 {
		t.Errorf("%d days", len(monthly))
	}

	// The trades, against the hand computation.
	tf := e.openRecord(rep.JobID, job.RecordTrades)
	tr, err := tearsheet.ReadTrades(tf)
	tf.Close()
	if err != nil {
		t.Fatal(err)
	}
	ts := metrics.TradeStats(tr.Trades)
	h := qs.Trades
	if float64(ts.Count) != h["count"] || ts.Count != m.Trades || ts.Count < 20 {
		t.Errorf("%d trades, by hand %v, the report %d", ts.Count, h["count"], m.Trades)
	}
	for name, pair := range map[string][2]float64{"win_rate": {ts.WinRate, h["win_rate"]}, "profit_factor": {ts.ProfitFactor, h["profit_factor"]},
		"payoff": {ts.Payoff, h["payoff"]}, "expectancy": {ts.Expectancy, h["expectancy"]}, "avg_return": {ts.AvgReturn, h["avg_return"]},
		"median_return": {ts.MedianReturn, h["median_return"]}, "best": {ts.Best, h["best"]}, "worst": {ts.Worst, h["worst"]},
		"avg_holding_s": {ts.AvgHolding.Seconds(), h["avg_holding_s"]}, "sqn": {ts.SQN, h["sqn"]},
		"report win_rate": {m.WinRate, h["win_rate"]}, "report profit_factor": {m.ProfitFactor, h["profit_factor"]},
		"report expectancy": {m.Expectancy, h["expectancy"]}} {
		if !agree(pair[0], pair[1]) {
			t.Errorf("trades %s: %.17g, by hand %.17g", name, pair[0], pair[1])
		}
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range fields {
			if !yield(k) {
				return
			}
		}
	})
	t.Logf("compared with quantstats: %s, rolling Sharpe (%d values), monthly returns; trades: 10 figures", strings.Join(keys, ", "), checked)
}
