package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"stratbench/stats"
)

// point is a point of a test equity record.
type point struct {
	t int64
	v float64
}

// fakeRecords are equity records in memory, by job id, and the bar times.
type fakeRecords struct {
	bars   []int64
	curves map[string][]point
	reads  int
}

func (f *fakeRecords) source() RobustnessSource {
	return RobustnessSource{
		Bars: func(context.Context) ([]int64, error) { return f.bars, nil },
		EquityPoints: func(ctx context.Context, id string, fn func(int64, float64) error) error {
			f.reads++
			c, ok := f.curves[id]
			if !ok {
				return fmt.Errorf("job %s has no equity.csv: %w", id, errors.New("file does not exist"))
			}
			for _, p := range c {
				if err := fn(p.t, p.v); err != nil {
					return err
				}
			}
			return ctx.Err()
		},
	}
}

// randomCurve is a run's record over bars: a point per bar (two for
// some), at the bar's time, of a random walk of its equity from start,
// and a point after the last bar that must not count.
func randomCurve(g *rand.Rand, bars []int64, start, drift float64) []point {
	var c []point
	eq := start
	for _, b := range bars {
		eq *= 1 + drift + 0.01*g.NormFloat64()
		if g.IntN(5) == 0 {
			c = append(c, point{b, eq * 0.99}) // an earlier event at the same time
		}
		c = append(c, point{b, eq})
	}
	return append(c, point{bars[len(bars)-1] + 1, eq * 3})
}

// robustSweep is a finished plain sweep of n passed runs over t+1 bars
// (and one failed run), each with an equity record; run 0 drifts up and is
// the best.
func robustSweep(n, t int, seed uint64) (*Document, *fakeRecords) {
	g := rand.New(rand.NewPCG(seed, 9))
	f := &fakeRecords{curves: map[string][]point{}}
	for i := range t + 1 {
		f.bars = append(f.bars, int64(1_000_000+60_000_000_000*i))
	}
	doc := &Document{Spec: SpecDoc{Metric: "sharpe"}, RunFlags: &RunFlags{Cash: 10_000}}
	for i := range n {
		r := passed(int64(i), float64(n-i))
		drift := 0.0
		if i == 0 {
			drift = 0.004
		}
		f.curves[r.JobID] = randomCurve(g, f.bars, 10_000, drift)
		doc.Runs = append(doc.Runs, r)
	}
	doc.Runs = append(doc.Runs, failed(int64(n)))
	doc.Tally(&Plan{}, nil, doc.Runs)
	return doc, f
}

// TestAlignEquityIsStatsAlign: the streamed alignment gives stats.Align's
// values: the last point at or before each bar, the start before the
// first point, points after the last bar left out.
func TestAlignEquityIsStatsAlign(t *testing.T) {
	g := rand.New(rand.NewPCG(3, 3))
	for trial := range 200 {
		var bars []int64
		b := int64(g.IntN(5))
		for range g.IntN(40) + 1 {
			b += int64(g.IntN(3)) // equal bar times too
			bars = append(bars, b)
		}
		var pts []point
		pt := int64(g.IntN(8)) - 3
		for range g.IntN(60) {
			pt += int64(g.IntN(3))
			pts = append(pts, point{pt, g.NormFloat64()})
		}
		times, values := make([]int64, len(pts)), make([]float64, len(pts))
		for i, p := range pts {
			times[i], values[i] = p.t, p.v
		}
		want, err := stats.Align(times, values, bars, 7)
		if err != nil {
			t.Fatal(err)
		}
		f := &fakeRecords{curves: map[string][]point{"j": pts}}
		got := make([]float64, len(bars))
		if err := alignEquity(context.Background(), f.source(), "j", bars, 7, got); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: bars %v points %v: got %v, want %v", trial, bars, pts, got, want)
		}
	}
	// A record that goes back in time is refused.
	f := &fakeRecords{curves: map[string][]point{"j": {{5, 1}, {4, 1}}}}
	if err := alignEquity(context.Background(), f.source(), "j", []int64{5}, 1, make([]float64, 1)); err == nil || !strings.Contains(err.Error(), "back in time") {
		t.Fatalf("a record going back: %v", err)
	}
}

// TestComputeRobustnessIsTheStatistics: the block holds the figures the
// stats package gives on the runs' returns aligned by stats.Align (the
// whole matrix, computed here the direct way): the best run's PSR and
// DSR, PBO and every split's λ, with the verdict.
func TestComputeRobustnessIsTheStatistics(t *testing.T) {
	const n, bars = 9, 400
	doc, f := robustSweep(n, bars, 1)
	rb, why, err := ComputeRobustness(context.Background(), doc, f.source())
	if err != nil || rb == nil {
		t.Fatalf("no block: %q, %v", why, err)
	}
	cscv, err := stats.NewCSCV(bars, 0)
	if err != nil {
		t.Fatal(err)
	}
	var sharpes []float64
	var best stats.Moments
	for i := range n {
		c := f.curves[fmt.Sprintf("job-%d", i)]
		times, values := make([]int64, len(c)), make([]float64, len(c))
		for k, p := range c {
			times[k], values[k] = p.t, p.v
		}
		eq, err := stats.Align(times, values, f.bars, 10_000)
		if err != nil {
			t.Fatal(err)
		}
		rets, err := stats.Returns(eq)
		if err != nil {
			t.Fatal(err)
		}
		m, err := stats.ComputeMoments(rets)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			best = m
		}
		sharpes = append(sharpes, m.Sharpe())
		if err := cscv.Add(rets); err != nil {
			t.Fatal(err)
		}
	}
	d, err := stats.DeflatedSharpe(best, sharpes)
	if err != nil {
		t.Fatal(err)
	}
	psr, _ := best.PSR(0)
	res, err := cscv.Result(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lambdas := res.Lambdas()
	slices.Sort(lambdas)
	var got []float64
	for i, v := range rb.Lambdas.Values {
		for range rb.Lambdas.Counts[i] {
			got = append(got, v)
		}
	}
	want := Robustness{Trials: n, Periods: bars, BestIndex: 0, BestSharpe: d.Sharpe, BestPSR: psr, SharpeVariance: d.Variance,
		ExpectedMaxSharpe: d.Threshold, DeflatedSharpe: d.DSR, PBO: res.PBO, Blocks: 16, Combinations: 12870,
		OOSLossProbability: res.OOSLossProbability, Verdict: stats.Judge(res.PBO, d.DSR).String()}
	rb2 := *rb
	rb2.Lambdas = Lambdas{}
	if fmt.Sprintf("%+v", rb2) != fmt.Sprintf("%+v", want) {
		t.Errorf("block\n%+v\nwant\n%+v", rb2, want)
	}
	if !slices.Equal(got, lambdas) {
		t.Errorf("the λ values differ: %d against %d", len(got), len(lambdas))
	}
	if f.reads != n {
		t.Errorf("%d records read for %d passed runs", f.reads, n)
	}
	// The JSON keys docs/robustness.md lists.
	b, _ := json.Marshal(rb)
	var keys map[string]any
	json.Unmarshal(b, &keys)
	for _, k := range []string{"trials", "periods", "best_index", "best_sharpe", "best_psr", "sharpe_variance", "expected_max_sharpe",
		"deflated_sharpe", "pbo", "blocks", "combinations", "oos_loss_probability", "lambdas", "verdict"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("no %q in %s", k, b)
		}
	}
	if len(keys) != 14 {
		t.Errorf("%d keys: %s", len(keys), b)
	}
}

// TestComputeRobustnessReasons: no block, and why, when the statistics
// cannot be had.
func TestComputeRobustnessReasons(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		edit func(doc *Document, f *fakeRecords)
		want string
	}{
		{"one passed run", func(doc *Document, f *fakeRecords) {
			doc.Tally(&Plan{}, nil, []Result{doc.Runs[0], failed(7)})
		}, "1 run passed: the statistics compare 2 passed runs at least"},
		{"a walk-forward", func(doc *Document, f *fakeRecords) {
			doc.WalkForward = &WalkForwardResult{}
		}, "a walk-forward"},
		{"short data", func(doc *Document, f *fakeRecords) {
			f.bars = f.bars[:64]
		}, "63 returns (one a bar after the first): PBO needs 64 at least"},
		{"a record missing", func(doc *Document, f *fakeRecords) {
			delete(f.curves, "job-2")
		}, "run #2 (job job-2): job job-2 has no equity.csv"},
		{"a record not finite", func(doc *Document, f *fakeRecords) {
			f.curves["job-1"][3].v = math.Inf(1)
		}, "run #1 (job job-1): its equity record holds +Inf"},
		{"a best run that never trades", func(doc *Document, f *fakeRecords) {
			for i := range f.curves["job-0"] {
				f.curves["job-0"][i].v = 10_000
			}
		}, "the best run #0's returns do not vary"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, f := robustSweep(4, 300, 2)
			tc.edit(doc, f)
			rb, why, err := ComputeRobustness(ctx, doc, f.source())
			if err != nil || rb != nil || !strings.HasPrefix(why, tc.want) {
				t.Fatalf("block %v, reason %q, error %v; want the reason %q", rb, why, err, tc.want)
			}
		})
	}
	// A context that ends is the error.
	doc, f := robustSweep(4, 300, 2)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := ComputeRobustness(cctx, doc, f.source()); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// TestCSCVBlocksBoundTheWork: 16 blocks for a usual sweep, fewer for
// short data and for sweeps of many runs, never more work than
// MaxCSCVWork (but at the fewest blocks).
func TestCSCVBlocksBoundTheWork(t *testing.T) {
	for _, tc := range []struct{ t, n, want int }{
		{20_000, 1000, 16}, {20_000, 2000, 16}, {20_000, 3000, 14}, {20_000, 100_000, 10}, {20_000, 1_000_000, 6},
		{100, 10, 6}, {63, 10, 0}, {64, 10, 4}, {20_000, 100_000_000, 4},
	} {
		if got := CSCVBlocks(tc.t, tc.n); got != tc.want {
			t.Errorf("CSCVBlocks(%d, %d) = %d, want %d", tc.t, tc.n, got, tc.want)
		}
	}
}

// TestRunnerComputesRobustness: a sweep that finishes has the block in its
// saved document; one that stops has none, and says why.
func TestRunnerComputesRobustness(t *testing.T) {
	spec, err := ParseSpec(Flags{Grid: []string{"a=1:6:1"}}, map[string]any{"a": int64(0)})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRecords{curves: map[string][]point{}}
	for i := range 301 {
		f.bars = append(f.bars, int64(i))
	}
	src := f.source()
	equity := src.EquityPoints
	src.EquityPoints = func(ctx context.Context, id string, fn func(int64, float64) error) error {
		if _, ok := f.curves[id]; !ok { // the job's record, as its run made it
			h := fnv.New64a()
			h.Write([]byte(id))
			f.curves[id] = randomCurve(rand.New(rand.NewPCG(h.Sum64(), 1)), f.bars, 10_000, 0)
		}
		return equity(ctx, id, fn)
	}
	s := newTestStarter(10)
	s.autoEnd = true
	s.metric = func(it Item) float64 { return float64(it.Combination.Index) }
	r, store := newTestRunner(t, spec, nil, s, 2)
	r.Robustness = &src
	if err := r.Run(context.Background(), make(chan struct{})); err != nil {
		t.Fatal(err)
	}
	saved, err := store.Load(r.Doc.SweepID)
	if err != nil {
		t.Fatal(err)
	}
	if rb := saved.Robustness; rb == nil || rb.Trials != 6 || rb.BestIndex != 5 || rb.Periods != 300 || saved.RobustnessReason != "" {
		t.Fatalf("saved block %+v, reason %q", rb, saved.RobustnessReason)
	}

	// A stopped sweep: none, and why.
	s = newTestStarter(10)
	r, store = newTestRunner(t, spec, nil, s, 2)
	r.Robustness = &src
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background(), stop) }()
	(<-s.runs).release <- Result{Status: RunPassed, JobID: "j"}
	<-s.runs
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	saved, _ = store.Load(r.Doc.SweepID)
	if saved.Status != StatusStopped || saved.Robustness != nil || saved.RobustnessReason != reasonStopped {
		t.Fatalf("stopped: %s, block %v, reason %q", saved.Status, saved.Robustness, saved.RobustnessReason)
	}
}
