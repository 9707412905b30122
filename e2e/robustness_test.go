package e2e

// End-to-end tests of the robustness block of a sweep through the binary:
// the validation docs/robustness.md describes, on generated data.
// Strategies that trade at random on a random walk look overfit; a grid
// in which a few runs know a real pattern of the data looks real.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"stratbench/internal/e2etest"
	"stratbench/sweep"
)

const randomTrader = "testdata/robust/random_trader.py"

// randomWalk writes a CSV of bars one minute apart: a random walk of
// per-bar returns 1% × N(0, 1), drawn from seed, plus mu on every bar
// whose number is a multiple of period (mu 0: no pattern). Each bar opens
// at the previous close, so that an order placed at a bar fills at the
// price the bar closed at.
func randomWalk(t *testing.T, seed uint64, bars, period int, mu float64) string {
	t.Helper()
	g := rand.New(rand.NewPCG(seed, 77))
	var b strings.Builder
	b.WriteString("timestamp,symbol,open,high,low,close,volume\n")
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	prev := 100.0
	for i := range bars {
		r := 0.01 * g.NormFloat64()
		if i > 0 && i%period == 0 {
			r += mu
		}
		c := prev * (1 + r)
		if i == 0 {
			c = prev
		}
		fmt.Fprintf(&b, "%s,RW,%.10g,%.10g,%.10g,%.10g,1000\n", start.Add(time.Duration(i)*time.Minute).Format(time.RFC3339),
			prev, max(prev, c), min(prev, c), c)
		prev = c
	}
	path := filepath.Join(t.TempDir(), "walk.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// robustSweep runs random_trader.py over seeds 0 … runs−1 on data,
// with the extra grid args, and returns its document and text summary.
func robustSweep(t *testing.T, e *env, data string, runs int, extra ...string) (*sweep.Document, string) {
	t.Helper()
	args := append([]string{"sweep", randomTrader, "--ci", "--output", "json", "--jobs", "2", "--data", data,
		"--fee-bps", "0", "--slippage-bps", "0", "--allow-short", "--grid", fmt.Sprintf("seed=0:%d:1", runs-1)}, extra...)
	r := e.Run(args...)
	if r.Code != 0 {
		t.Fatalf("the sweep: exit %d\n%s", r.Code, r.Stderr)
	}
	doc := e2etest.DecodeSweep(t, r.Stdout)
	st := e.Run("status", doc.SweepID)
	if st.Code != 0 {
		t.Fatalf("status: exit %d\n%s", st.Code, st.Stderr)
	}
	if doc.Robustness == nil {
		t.Fatalf("no robustness block: %q\n%s", doc.RobustnessReason, st.Stdout)
	}
	rb := doc.Robustness
	t.Logf("%d trials over %d returns: PBO %.4f, DSR %.4f (best #%d, SR %.4f against SR* %.4f), PSR %.4f, out-of-sample loss %.4f: %s",
		rb.Trials, rb.Periods, rb.PBO, rb.DeflatedSharpe, rb.BestIndex, rb.BestSharpe, rb.ExpectedMaxSharpe, rb.BestPSR, rb.OOSLossProbability, rb.Verdict)
	return doc, st.Stdout
}

// TestRobustnessOfRandomStrategies: 40 strategies that trade at random on
// a random walk of 1,000 bars. The best of them is no better than luck:
// PBO in [0.3, 0.7] and a deflated Sharpe ratio below 0.5, "likely
// overfit", in the document, the text summary and the sweep's report.
//
// Without skill PBO and the DSR of the best are random from one sweep to
// the next (the DSR is close to uniform, like a p-value: below 0.5 in
// about half of the sweeps; of the walks of seeds 1 to 6, those of 2, 4
// and 6 give a DSR below 0.5, and every PBO is in the range): the data's
// seed is fixed (2) so that this sweep is one whose figures fall in the
// ranges. stats' own validation (TestValidationRandomStrategies) checks
// the spread over 30 sweeps.
func TestRobustnessOfRandomStrategies(t *testing.T) {
	e := newEnv(t)
	data := randomWalk(t, 2, 1000, 4, 0)
	doc, text := robustSweep(t, e, data, 40)
	rb := doc.Robustness
	if rb.Trials != 40 || rb.Periods != 999 || rb.Blocks != 16 || rb.Combinations != 12870 || rb.BestIndex != doc.Best.Index {
		t.Errorf("block %+v, best #%d", rb, doc.Best.Index)
	}
	if rb.PBO < 0.3 || rb.PBO > 0.7 || rb.DeflatedSharpe >= 0.5 {
		t.Errorf("PBO %.4f (want 0.3 to 0.7), deflated Sharpe %.4f (want below 0.5)", rb.PBO, rb.DeflatedSharpe)
	}
	if rb.Verdict != "likely overfit" {
		t.Errorf("verdict %q", rb.Verdict)
	}
	want := fmt.Sprintf("robustness likely overfit: deflated Sharpe %.2f, PBO %.2f (12,870 splits of 16 blocks)", rb.DeflatedSharpe, rb.PBO)
	if !strings.Contains(text, want) {
		t.Errorf("the summary lacks %q:\n%s", want, text)
	}
	// The sweep's report shows the verdict and the figures.
	out := filepath.Join(t.TempDir(), "sweep.html")
	if r := e.Run("report", doc.SweepID, "--out", out); r.Code != 0 {
		t.Fatalf("report: exit %d\n%s", r.Code, r.Stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<strong>likely overfit</strong>`, `<th>pbo</th>`, `id="chart-lambdas"`, `"lambdas":{"edges":`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// TestRobustnessOfAPlantedEdge: 60 strategies on a walk of 2,000 bars
// in which every fourth bar rises by 0.6% more than the noise; five of
// them (seeds 20 to 24) hold a position over those bars, the others trade
// at random. The best is one of the five, and both statistics say it is
// real: PBO below 0.1, deflated Sharpe ratio above 0.95, "likely real"
// (on the walks of seeds 2 to 7 alike: PBO at most 0.003, DSR 0.96 to
// 0.9995).
func TestRobustnessOfAPlantedEdge(t *testing.T) {
	e := newEnv(t)
	data := randomWalk(t, 2, 2000, 4, 0.006)
	doc, text := robustSweep(t, e, data, 60, "--param", "edge_from=20", "--param", "edge_to=25")
	rb := doc.Robustness
	if rb.BestIndex < 20 || rb.BestIndex >= 25 {
		t.Errorf("the best run is #%d, not one with the edge", rb.BestIndex)
	}
	if rb.PBO >= 0.1 || rb.DeflatedSharpe <= 0.95 {
		t.Errorf("PBO %.4f (want below 0.1), deflated Sharpe %.4f (want above 0.95)", rb.PBO, rb.DeflatedSharpe)
	}
	if rb.Verdict != "likely real" || !strings.Contains(text, "robustness likely real: ") {
		t.Errorf("verdict %q; summary:\n%s", rb.Verdict, text)
	}
}
