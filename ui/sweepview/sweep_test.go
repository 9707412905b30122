package sweepview

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"stratbench/internal/fixtures"
	"stratbench/internal/units"
	"stratbench/internal/words"
	"stratbench/job"
	"stratbench/sweep"
	"stratbench/themes"
	"stratbench/ui/components"
	"stratbench/ui/internal/uitest"
)

// The sweep view's screens are built from recordings of real sweeps
// (testdata/sweep: the sweep.json and results.jsonl of a grid sweep with
// failing runs, of the same grid with --constraint 'fast * 10 <= slow',
// of the same grid with --random 10 --seed 7, and of a walk-forward on the
// bundled week, made by `stratbench sweep testdata/sweep/sma.py --ci`),
// fed to the view as the sweep would feed them.

// recordedSweep is a recorded sweep folder.
type recordedSweep struct {
	doc     *sweep.Document
	results []sweep.Result
	folds   []sweep.Fold
	// planned is what app tells the view of the sweep's plan, from the
	// sweep package's Plan of the recorded spec.
	planned func(sweep.Params) bool
	// jobs is the folder of the failed runs' job folders (their job.json
	// as the run left it), or "".
	jobs string
}

// store returns a job store holding rec's recorded jobs.
func (rec recordedSweep) store(t testing.TB) *job.Store {
	t.Helper()
	store := uitest.NewStore(t)
	entries, err := os.ReadDir(rec.jobs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		report, err := os.ReadFile(filepath.Join(rec.jobs, e.Name(), "job.json"))
		if err != nil {
			t.Fatal(err)
		}
		dir := store.JobDir(e.Name())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "job.json"), report, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return store
}

func loadSweep(t testing.TB, name string) recordedSweep {
	t.Helper()
	dir := filepath.Join("testdata", "sweep", name)
	data, err := os.ReadFile(filepath.Join(dir, sweep.DocumentFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc sweep.Document
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	rb, err := sweep.ReadResults(filepath.Join(dir, sweep.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	rec := recordedSweep{doc: &doc, results: rb.Results, planned: plannedOf(t, doc.Spec)}
	if _, err := os.Stat(filepath.Join(dir, "jobs")); err == nil {
		rec.jobs = filepath.Join(dir, "jobs")
	}
	if wf := doc.WalkForward; wf != nil {
		for k, f := range wf.Folds {
			rec.folds = append(rec.folds, sweep.Fold{Index: k, Train: f.Train, Test: f.Test})
		}
	}
	return rec
}

// plannedOf reports whether the plan of the spec runs a combination, as
// app's planned does (app's own test checks it against the same Plan).
func plannedOf(t testing.TB, doc sweep.SpecDoc) func(sweep.Params) bool {
	t.Helper()
	spec, err := sweep.RestoreSpec(doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := spec.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]bool{}
	for c := range plan.All(context.Background()) {
		in[c.Params.String()] = true
	}
	return func(p sweep.Params) bool { return in[p.String()] }
}

// startDoc is the document as it is when the sweep starts.
func (r recordedSweep) startDoc() *sweep.Document {
	d := *r.doc
	d.Status, d.Counts, d.Best, d.Runs, d.WalkForward, d.FinishedAt, d.DurationMS = sweep.StatusRunning,
		sweep.Counts{Total: r.doc.Counts.Total}, nil, nil, nil, nil, 0
	return &d
}

// sweepLater is how long after the sweep started the screens are drawn:
// the view starts with the sweep (its document's started_at), as app
// starts it, so that an ended sweep's finished_at lies in the view's time.
const sweepLater = 10 * time.Second

// testSweep is a sweep view fed by a test.
type testSweep struct {
	m       *sweepModel
	updates chan Update
	stops   int
}

func newTestSweep(t testing.TB, rec recordedSweep, w, h int) *testSweep {
	t.Helper()
	ts := &testSweep{updates: make(chan Update, 1024)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	opts := Options{
		Start:   Start{Doc: rec.startDoc(), Total: rec.doc.Counts.Total, Folds: rec.folds, Planned: rec.planned},
		Updates: ts.updates,
		Stop:    func() { ts.stops++ },
	}
	if rec.jobs != "" {
		opts.Store = rec.store(t)
	}
	ts.m = newSweepModel(ctx, opts, themes.Plain(), false)
	t0 := rec.doc.StartedAt
	ts.m.now = func() time.Time { return t0 }
	ts.m.reset(opts.Start)
	ts.m.now = func() time.Time { return t0.Add(sweepLater) }
	ts.m.Update(uitest.Size(w, h))
	return ts
}

// endedSweep is the view at w×h of recording name, fed all its results
// and its last document, as most tests want it; store, when not nil, is
// the job store the view opens runs from (set before the feed, as a sweep
// starts with it).
func endedSweep(t testing.TB, name string, w, h int, store *job.Store) (recordedSweep, *testSweep) {
	t.Helper()
	rec := loadSweep(t, name)
	ts := newTestSweep(t, rec, w, h)
	if store != nil {
		ts.m.opts.Store = store
	}
	ts.feed(t, rec.results, rec.doc, true)
	return rec, ts
}

// feed delivers results (and then a document, when doc is set) through
// Updates, as the sweep does, and applies them.
func (ts *testSweep) feed(t testing.TB, results []sweep.Result, doc *sweep.Document, ended bool) {
	t.Helper()
	for i := range results {
		ts.updates <- Update{Result: &results[i]}
	}
	if doc != nil {
		d := *doc
		d.Runs = nil
		ts.updates <- Update{Doc: &d, Ended: ended}
	}
	ts.m.Update(ts.m.waitUpdates()())
}

// openSelected presses enter on the selected run and runs the command
// that opens its job from the store.
func (ts *testSweep) openSelected(t testing.TB) {
	t.Helper()
	_, cmd := ts.m.Update(uitest.Press("enter"))
	if cmd == nil || ts.m.job == nil {
		t.Fatal("enter opened nothing")
	}
	ts.m.Update(cmd())
}

// readReasons does the reads of failed runs' reports the view asks for
// (its commands, which a test does not run on its own), as they would be
// done once the screen shows those runs.
func (ts *testSweep) readReasons() {
	for id, why := range ts.m.reasons {
		if why == "" {
			delete(ts.m.reasons, id) // asked by an Update whose command was not run
		}
	}
	if cmd := ts.m.wantReasons(); cmd != nil {
		ts.m.Update(cmd())
	}
}

// sweepStates are the view's states the golden screens show.
func sweepStates() []struct {
	name  string
	sweep string
	setup func(t *testing.T, ts *testSweep, rec recordedSweep)
} {
	half := func(t *testing.T, ts *testSweep, rec recordedSweep) {
		ts.feed(t, rec.results[:len(rec.results)/2], nil, false)
	}
	all := func(t *testing.T, ts *testSweep, rec recordedSweep) { ts.feed(t, rec.results, rec.doc, true) }
	return []struct {
		name  string
		sweep string
		setup func(t *testing.T, ts *testSweep, rec recordedSweep)
	}{
		{"grid-started", "grid", func(t *testing.T, ts *testSweep, rec recordedSweep) {}},
		{"grid-running", "grid", half},
		{"grid-stopping", "grid", func(t *testing.T, ts *testSweep, rec recordedSweep) {
			half(t, ts, rec)
			ts.m.Update(uitest.Press("q"))
		}},
		{"grid-ended", "grid", all},
		{"grid-axes", "grid", func(t *testing.T, ts *testSweep, rec recordedSweep) {
			all(t, ts, rec)
			ts.m.Update(uitest.Press("x")) // fast → fail_at (slow is y)
			ts.m.Update(uitest.Press("w")) // swap
		}},
		{"grid-selected", "grid", func(t *testing.T, ts *testSweep, rec recordedSweep) {
			all(t, ts, rec)
			ts.m.Update(uitest.Press("G"))
		}},
		{"grid-help", "grid", func(t *testing.T, ts *testSweep, rec recordedSweep) {
			all(t, ts, rec)
			ts.m.Update(uitest.Press("?"))
		}},
		{"constraint-running", "constraint", half},
		{"constraint-ended", "constraint", all},
		{"random-running", "random", half},
		{"walkforward-running", "walkforward", half},
		{"walkforward-ended", "walkforward", all},
		{"walkforward-fold0", "walkforward", func(t *testing.T, ts *testSweep, rec recordedSweep) {
			all(t, ts, rec)
			ts.m.Update(uitest.Press("f"))
		}},
		// Runs that fail in three ways, why on their rows.
		{"failures-ended", "failures", func(t *testing.T, ts *testSweep, rec recordedSweep) {
			all(t, ts, rec)
			ts.readReasons()
		}},
		{"failures-last", "failures", func(t *testing.T, ts *testSweep, rec recordedSweep) {
			all(t, ts, rec)
			ts.m.Update(uitest.Press("G"))
			ts.readReasons()
		}},
	}
}

// TestGoldenSweepView renders every state at both sizes without colour and
// compares the screen with its golden file (go test -update rewrites
// them).
func TestGoldenSweepView(t *testing.T) {
	for _, st := range sweepStates() {
		for _, sz := range uitest.GoldenSizes {
			t.Run(fmt.Sprintf("%s/%dx%d", st.name, sz[0], sz[1]), func(t *testing.T) {
				rec := loadSweep(t, st.sweep)
				ts := newTestSweep(t, rec, sz[0], sz[1])
				st.setup(t, ts, rec)
				out := ts.m.View().Content
				uitest.CheckGolden(t, out, sz[0], sz[1])
			})
		}
	}
}

// TestSweepViewOpensARun: enter opens the selected run's job in the usual
// panes, esc comes back to the sweep.
func TestSweepViewOpensARun(t *testing.T) {
	store := uitest.NewStore(t)
	rec, ts := endedSweep(t, "grid", 120, 40, store)
	best := rec.doc.Best.JobID
	job := fixtures.Load(t, "passed")
	uitest.SaveJob(t, store, job.ReportAs(best), job.Logs, job.Equity)
	ts.openSelected(t)
	screen := ansi.Strip(ts.m.View().Content)
	if !strings.Contains(screen, "stored job "+best) || !strings.Contains(screen, "5 Results") {
		t.Fatalf("the run's job is not shown:\n%s", screen)
	}
	ts.m.Update(uitest.Press("esc"))
	if ts.m.job != nil || !strings.Contains(ansi.Strip(ts.m.View().Content), "heatmap") {
		t.Fatal("esc did not come back to the sweep")
	}
}

// TestSweepViewRateStopsAtTheEnd: once the sweep has ended, runs/s is its
// rate up to its finished_at and stays so while the view stays open.
func TestSweepViewRateStopsAtTheEnd(t *testing.T) {
	rec, ts := endedSweep(t, "grid", 120, 40, nil)
	ran := rec.doc.FinishedAt.Sub(rec.doc.StartedAt).Seconds()
	want := fmt.Sprintf("%.1f runs/s", float64(len(rec.results))/ran)
	for _, later := range []time.Duration{sweepLater, time.Minute, time.Hour} {
		ts.m.now = func() time.Time { return rec.doc.StartedAt.Add(later) }
		line := strings.Split(ansi.Strip(ts.m.View().Content), "\n")[1]
		if !strings.Contains(line, want) || strings.Contains(line, "ETA") {
			t.Fatalf("%v after the start: %q, want %q and no ETA", later, line, want)
		}
	}
}

// TestSweepViewFoldsAt80x24: at the smallest size the walk-forward's
// stitched return and efficiency stay on screen, every fold can be brought
// into sight with f, and the efficiency is explained (in the pane or
// under ?).
func TestSweepViewFoldsAt80x24(t *testing.T) {
	rec, ts := endedSweep(t, "walkforward", 80, 24, nil)
	wf := rec.doc.WalkForward
	summary := fmt.Sprintf("out of sample %s over %d folds · efficiency %s", units.Percent(wf.OutOfSample.TotalReturn),
		wf.OutOfSample.Folds, units.Number(*wf.Efficiency))
	seen := map[int]bool{}
	for range rec.folds {
		ts.m.Update(uitest.Press("f"))
		screen := ansi.Strip(ts.m.View().Content)
		if !strings.Contains(screen, summary) {
			t.Fatalf("fold %d selected: no %q on the screen:\n%s", ts.m.fold, summary, screen)
		}
		for k, f := range rec.folds {
			if strings.Contains(screen, foldWindow(f.Train)+" "+foldWindow(f.Test)) {
				seen[k] = true
			}
		}
	}
	if len(seen) != len(rec.folds) {
		t.Fatalf("folds seen with f: %v of %d", seen, len(rec.folds))
	}
	ts.m.Update(uitest.Press("?"))
	if screen := ansi.Strip(ts.m.View().Content); !strings.Contains(screen, efficiencyHint) {
		t.Fatalf("? does not explain the efficiency:\n%s", screen)
	}
}

// TestSweepViewOpensATestRun: in a walk-forward the runs list ends with
// the selected fold's test run, marked test and not taken for the best;
// G selects it and enter opens its job, as for a train run; ? says so.
func TestSweepViewOpensATestRun(t *testing.T) {
	store := uitest.NewStore(t)
	rec, ts := endedSweep(t, "walkforward", 80, 24, store)
	for _, k := range []int{len(rec.folds) - 1, 0} { // the latest fold, then f to the first
		if k == 0 {
			ts.m.Update(uitest.Press("f"))
		}
		var test *sweep.Result
		for i := range rec.results {
			if r := &rec.results[i]; r.Fold != nil && *r.Fold == k && r.Phase == sweep.PhaseTest {
				test = r
			}
		}
		if test == nil {
			t.Fatalf("the recording has no test run of fold %d", k)
		}
		screen := ansi.Strip(ts.m.View().Content)
		if !strings.Contains(screen, fmt.Sprintf("fold %d: best train runs (4), test run (G)", k)) {
			t.Fatalf("fold %d: the runs list does not say it ends with the test run:\n%s", k, screen)
		}
		if b := ts.m.best(); b == nil || b.r.Phase != sweep.PhaseTrain {
			t.Fatalf("fold %d: the best run in view is not a train run: %+v", k, b)
		}
		ts.m.Update(uitest.Press("G"))
		if got := ts.m.runs[ts.m.ranked[ts.m.selected]].r; got.JobID != test.JobID {
			t.Fatalf("fold %d: G selects %s (%s), want the test run %s", k, got.JobID, got.Phase, test.JobID)
		}
		if screen := ansi.Strip(ts.m.View().Content); !regexp.MustCompile(fmt.Sprintf(`▸ +%d  ✓ test passed`, test.Index)).MatchString(screen) {
			t.Fatalf("fold %d: the selected test run is not shown marked test:\n%s", k, screen)
		}
		job := fixtures.Load(t, "passed")
		uitest.SaveJob(t, store, job.ReportAs(test.JobID), job.Logs, job.Equity)
		_, cmd := ts.m.Update(uitest.Press("enter"))
		if cmd == nil || ts.m.job == nil {
			t.Fatalf("fold %d: enter on the test run opened nothing", k)
		}
		ts.m.Update(cmd())
		if screen := ansi.Strip(ts.m.View().Content); !strings.Contains(screen, "stored job "+test.JobID) {
			t.Fatalf("fold %d: the test run's job is not shown:\n%s", k, screen)
		}
		ts.m.Update(uitest.Press("esc"))
	}
	ts.m.Update(uitest.Press("?"))
	if screen := ansi.Strip(ts.m.View().Content); !strings.Contains(screen, testRunHint) {
		t.Fatalf("? does not say where the test run is:\n%s", screen)
	}
}

// heatmapRow returns the cells of the heatmap's row labelled y, drawn
// without colour in w×h.
func heatmapRow(t *testing.T, m *sweepModel, y string, w, h int) []string {
	t.Helper()
	_, g := m.heatmap(themes.Plain(), w, h)
	for _, l := range strings.Split(ansi.Strip(m.heatmapView(themes.Plain(), w, h)), "\n") {
		if rest, ok := strings.CutPrefix(l, y+" "); ok {
			var cells []string
			for r := []rune(rest); len(r) >= g.CellW; r = r[g.CellW:] {
				cells = append(cells, string(r[:g.CellW]))
			}
			return cells
		}
	}
	t.Fatalf("no heatmap row %s", y)
	return nil
}

// TestSweepViewHeatmapMarks: the best run's cell has a mark of its own
// (without colour too) that the legend names; the selected run's cell is
// marked when it is on the plane; a cell without a result is "no result
// yet" while the sweep runs and "not run" once it has ended; the held
// params are called the best run's only once there is one.
func TestSweepViewHeatmapMarks(t *testing.T) {
	rec := loadSweep(t, "grid")
	ts := newTestSweep(t, rec, 80, 24)
	heat := ansi.Strip(ts.m.heatmapView(themes.Plain(), 78, 12))
	if strings.Contains(heat, "best run's") || !strings.Contains(heat, "no best run yet") {
		t.Fatalf("before any run the held params are said to be the best run's:\n%s", heat)
	}
	ts.feed(t, rec.results, rec.doc, true)
	// The plane holds fail_at=-1 (the best run's); x is fast (2, 3, 4, 5),
	// y slow (10 … 40). The best, #6, is fast=2, slow=40.
	row := heatmapRow(t, ts.m, "40", 78, 12)
	if !strings.HasPrefix(row[0], components.BestMark) || strings.Count(ts.m.heatmapView(themes.Plain(), 78, 12), components.BestMark) != 2 {
		t.Fatalf("the best cell is not the one marked %s: %q", components.BestMark, row)
	}
	heat = ansi.Strip(ts.m.heatmapView(themes.Plain(), 78, 12))
	if !strings.Contains(heat, components.BestMark+" best") || strings.Contains(heat, components.Levels[len(components.Levels)-1]+" best") {
		t.Fatalf("the legend does not name the best cell's mark:\n%s", heat)
	}
	// The third run ranked, #14, is fast=3, slow=40, fail_at=-1.
	ts.m.Update(uitest.Press("j"))
	ts.m.Update(uitest.Press("j"))
	if got := ts.m.runs[ts.m.ranked[ts.m.selected]].r.Index; got != 14 {
		t.Fatalf("selected #%d, want #14", got)
	}
	row = heatmapRow(t, ts.m, "40", 78, 12)
	for i, c := range row {
		if strings.HasSuffix(c, components.SelectedMark) != (i == 1) {
			t.Fatalf("the selected run's cell (fast=3) is not the one marked %s: %q", components.SelectedMark, row)
		}
	}

	// Without the plan (a view told none: Planned nil), an ended
	// sweep's empty cell is named by what could have left it empty.
	rec = loadSweep(t, "constraint")
	rec.planned = nil
	ts = newTestSweep(t, rec, 80, 24)
	ts.feed(t, rec.results, rec.doc, true)
	heat = ansi.Strip(ts.m.heatmapView(themes.Plain(), 78, 12))
	if row := heatmapRow(t, ts.m, "10", 78, 12); !strings.HasPrefix(row[0], components.NoRunMark) {
		t.Fatalf("fast=2, slow=10 is not empty (the constraint left it out): %q", row)
	}
	if strings.Contains(heat, "yet") || !strings.Contains(heat, "· not run (constraint)") {
		t.Fatalf("once the sweep ended, an empty cell is not said to be left out:\n%s", heat)
	}
}

// TestSweepViewHeatmapPlan: told the plan, the heatmap marks a cell the
// constraint or the sample left out as not in the sweep from the start,
// and says "no result yet" only of the combinations the sweep runs.
func TestSweepViewHeatmapPlan(t *testing.T) {
	for _, c := range []struct {
		sweep, why string
		// a cell the plan leaves out and one it runs, on the plane of
		// the held params (the first values, fail_at=-1, as no run has
		// passed yet): the y label, then the x position.
		outY     string
		outX     int
		plannedY string
		plannedX int
	}{
		// fast * 10 <= slow: fast=2, slow=10 is out; fast=2, slow=40 runs.
		{"constraint", "(constraint)", "10", 0, "40", 0},
		// --random 10 --seed 7 runs #1, 5, 7, 8, 10, 17, 21, 22, 26, 31;
		// on fail_at=-1: fast=2, slow=10 (#0) is out, fast=3, slow=10 (#8)
		// runs.
		{"random", "(not sampled)", "10", 0, "10", 1},
	} {
		rec := loadSweep(t, c.sweep)
		ts := newTestSweep(t, rec, 80, 24)
		// The cells as they start: no run has a result.
		heat := ansi.Strip(ts.m.heatmapView(themes.Plain(), 78, 12))
		out, planned := heatmapRow(t, ts.m, c.outY, 78, 12)[c.outX], heatmapRow(t, ts.m, c.plannedY, 78, 12)[c.plannedX]
		if !strings.HasPrefix(out, components.NotPlannedMark) || !strings.HasPrefix(planned, components.NoRunMark) {
			t.Fatalf("%s: as it starts, the cell left out is %q (want %s), the planned one %q (want %s):\n%s",
				c.sweep, out, components.NotPlannedMark, planned, components.NoRunMark, heat)
		}
		if !strings.Contains(heat, components.NotPlannedMark+" not in the sweep "+c.why) || !strings.Contains(heat, components.NoRunMark+" no result yet") {
			t.Fatalf("%s: the legend does not tell the cells left out from those to come:\n%s", c.sweep, heat)
		}
		ts.feed(t, rec.results, rec.doc, true)
		heat = ansi.Strip(ts.m.heatmapView(themes.Plain(), 78, 12))
		if strings.Contains(heat, "yet") || !strings.Contains(heat, components.NotPlannedMark+" not in the sweep "+c.why) {
			t.Fatalf("%s: once the sweep ended, the cells left out are not said to be:\n%s", c.sweep, heat)
		}
	}
}

// TestSweepViewHeatmapLegendNamesTheCellsDrawn: at every size, before
// any result and once the sweep has ended, the legend names the marks of
// empty cells (- left out, · no result) exactly when a cell drawn has
// one, and the selected mark when the selected run's cell is drawn: not
// what lies in the window laid out beyond the cells drawn.
func TestSweepViewHeatmapLegendNamesTheCellsDrawn(t *testing.T) {
	sizes := [][2]int{{78, 12}, {40, 12}, {24, 9}, {20, 8}, {14, 8}, {12, 8}, {12, 20}, {60, 6}, {118, 30}}
	narrowed := 0 // sizes at which the drawn cells lack a mark that the window laid out has
	for _, name := range []string{"grid", "constraint", "random", "walkforward", "wide"} {
		rec := loadSweep(t, name)
		ts := newTestSweep(t, rec, 80, 24)
		for _, ended := range []bool{false, true} {
			if ended {
				ts.feed(t, rec.results, rec.doc, true)
			}
			for _, sz := range sizes {
				heat := ansi.Strip(ts.m.heatmapView(themes.Plain(), sz[0], sz[1]))
				cells, legend := heatmapCellsAndLegend(t, heat)
				for mark, words := range map[string]string{components.NotPlannedMark: components.NotPlannedMark + " not in the sweep", components.NoRunMark: components.NoRunMark + " "} {
					drawn := markDrawn(cells, mark)
					if named := strings.Contains(legend, words); drawn != named {
						t.Errorf("%s (ended %v) at %dx%d: a cell drawn has %s: %v; the legend names it: %v\n%s",
							name, ended, sz[0], sz[1], mark, drawn, named, heat)
					}
				}
				if drawn, named := strings.Contains(cells, components.SelectedMark), strings.Contains(legend, components.SelectedMark+" selected"); drawn != named {
					t.Errorf("%s (ended %v) at %dx%d: selected cell drawn %v, named %v\n%s", name, ended, sz[0], sz[1], drawn, named, heat)
				}
				// What the whole plane has: more than the cells drawn at
				// some sizes, which the legend does not name then.
				if p := ts.m.plane(); len(p.xs)*len(p.ys) <= 10_000 {
					all := components.Heatmap{Cells: p.cells(0, 0, len(p.xs), len(p.ys), nil, nil, ts.m.start.Planned)}
					if m := all.MarksIn(0, 0, len(p.xs), len(p.ys)); m.Out && !markDrawn(cells, components.NotPlannedMark) ||
						m.NoRun && !markDrawn(cells, components.NoRunMark) {
						narrowed++
					}
				}
			}
		}
	}
	if narrowed == 0 {
		t.Fatal("at no size did the cells drawn lack a mark of the plane: the test shows nothing")
	}
}

// markDrawn reports whether a cell of cells (the heatmap's rows) is the
// mark alone: - is a minus too.
func markDrawn(cells, mark string) bool {
	return regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(mark) + `(\s|$)`).MatchString(cells)
}

// heatmapCellsAndLegend splits a plain heatmap into its cells (the rows
// without their y labels) and what follows the x labels.
func heatmapCellsAndLegend(t *testing.T, heat string) (cells, legend string) {
	t.Helper()
	lines := strings.Split(heat, "\n")
	xAt := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "→ ") })
	if xAt < 0 {
		t.Fatalf("no x labels:\n%s", heat)
	}
	labelW := len(lines[xAt]) - len(strings.TrimLeft(lines[xAt], " "))
	var b strings.Builder
	for _, l := range lines[:xAt] {
		if strings.Contains(l, "↓ ") {
			continue
		}
		if r := []rune(l); len(r) > labelW {
			b.WriteString(string(r[labelW:]) + "\n")
		}
	}
	return b.String(), strings.Join(lines[xAt+1:], "\n")
}

// TestSweepViewPaging: the runs list pages as the workbench's lists do
// (pgdn/space/ctrl+d, pgup/b/ctrl+u) by the rows it shows, and the page's
// selected run is on the screen.
func TestSweepViewPaging(t *testing.T) {
	rec := loadSweep(t, "grid")
	for _, sz := range uitest.GoldenSizes {
		ts := newTestSweep(t, rec, sz[0], sz[1])
		ts.feed(t, rec.results, rec.doc, true)
		rows := ts.m.runRows()
		last := len(rec.results) - 1
		want := 0
		for _, step := range []struct {
			key   string
			pages int
		}{{"pgdown", 1}, {"space", 1}, {"pgup", -1}, {"b", -1}, {"ctrl+d", 1}, {"ctrl+u", -1}, {"ctrl+u", -1}} {
			ts.m.Update(uitest.Press(step.key))
			want = min(max(want+step.pages*rows, 0), last)
			if ts.m.selected != want {
				t.Fatalf("%dx%d: %s selects %d, want %d (a page is %d rows)", sz[0], sz[1], step.key, ts.m.selected, want, rows)
			}
			r := ts.m.runs[ts.m.ranked[ts.m.selected]].r
			if !regexp.MustCompile(fmt.Sprintf(`▸ +%d  `, r.Index)).MatchString(ansi.Strip(ts.m.View().Content)) {
				t.Fatalf("%dx%d: after %s the selected run #%d is not on the screen", sz[0], sz[1], step.key, r.Index)
			}
		}
	}
}

// TestSweepViewHelpKeys: ? lists each key once.
func TestSweepViewHelpKeys(t *testing.T) {
	seen := map[string]string{}
	for _, group := range newSweepKeys().fullHelp() {
		for _, b := range group {
			for _, k := range strings.Split(b.Help().Key, "/") {
				if prev, ok := seen[k]; ok {
					t.Errorf("%s is listed twice: %q and %q", k, prev, b.Help().Desc)
				}
				seen[k] = b.Help().Desc
			}
		}
	}
}

// TestSweepViewHeaderFits: at 80 columns the header's first line shows
// the objective whole.
func TestSweepViewHeaderFits(t *testing.T) {
	for _, name := range []string{"grid", "walkforward"} {
		rec := loadSweep(t, name)
		ts := newTestSweep(t, rec, 80, 24)
		line := strings.Split(ansi.Strip(ts.m.View().Content), "\n")[0]
		if want := "max " + rec.doc.Spec.Metric; !strings.Contains(line, want+" ") && !strings.HasSuffix(strings.TrimRight(line, " "), want) {
			t.Errorf("%s: the header %q does not show %q", name, line, want)
		}
	}
}

// TestSweepViewOpenedRunSaysSweep: a run opened from the sweep view says
// that esc goes back to the sweep, its Jobs pane says where the sweep's
// runs are instead of "no jobs yet", and at 80 columns its header shows
// the run's params before the data.
func TestSweepViewOpenedRunSaysSweep(t *testing.T) {
	store := uitest.NewStore(t)
	rec, ts := endedSweep(t, "grid", 80, 24, store)
	best := rec.doc.Best
	// The recorded job of the example strategy, saved as the best run's
	// job with the run's params, as the sweep's report carries them.
	job := fixtures.Load(t, "passed")
	r := job.ReportAs(best.JobID)
	r.Strategy.Params = map[string]any{}
	for _, p := range best.Params {
		r.Strategy.Params[p.Name] = p.Value
	}
	uitest.SaveJob(t, store, r, job.Logs, job.Equity)
	ts.openSelected(t)
	ts.m.Update(uitest.Press("6"))
	screen := ansi.Strip(ts.m.View().Content)
	lines := strings.Split(screen, "\n")
	if !strings.Contains(lines[0], "esc: back to the sweep") || strings.Contains(screen, "live run") {
		t.Fatalf("the opened run does not say esc goes back to the sweep:\n%s", screen)
	}
	if strings.Contains(screen, "no jobs yet") || !strings.Contains(screen, "a sweep's runs are listed in the sweep view") {
		t.Fatalf("the Jobs pane does not say where the sweep's runs are:\n%s", screen)
	}
	if !strings.Contains(lines[1], "fail_at=-1 fast=2 slow=40") {
		t.Fatalf("the header does not show the run's params: %q", lines[1])
	}
}

// TestSweepViewQuit: q stops the sweep once and quits when it has ended; a
// second q while it stops quits at once.
func TestSweepViewQuit(t *testing.T) {
	rec := loadSweep(t, "grid")
	ts := newTestSweep(t, rec, 80, 24)
	ts.feed(t, rec.results[:3], nil, false)
	if _, cmd := ts.m.Update(uitest.Press("q")); cmd != nil || ts.stops != 1 || ts.m.state != sweepStopping {
		t.Fatalf("q: stops %d, state %d, cmd %v", ts.stops, ts.m.state, cmd != nil)
	}
	ts.updates <- Update{Doc: rec.doc, Ended: true}
	_, cmd := ts.m.Update(ts.m.waitUpdates()())
	if cmd == nil || ts.stops != 1 {
		t.Fatal("the view did not quit once the sweep ended")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("the command is not a quit")
	}

	ts = newTestSweep(t, rec, 80, 24)
	ts.m.Update(uitest.Press("q"))
	if _, cmd := ts.m.Update(uitest.Press("q")); cmd == nil {
		t.Fatal("a second q did not quit at once")
	} else if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("the second q's command is not a quit")
	}
}

// TestHeatmapScale: the best value is at the top of the scale and the
// worst at its bottom, minimised or not, and a value's level rises with
// its place.
func TestHeatmapScale(t *testing.T) {
	for _, minimize := range []bool{false, true} {
		hm := components.Heatmap{Lo: 1, Hi: 5, Minimize: minimize}
		best, worst := 5.0, 1.0
		if minimize {
			best, worst = 1, 5
		}
		if hm.Place(best) != 1 || hm.Place(worst) != 0 || hm.Level(best) != len(components.Levels)-1 || hm.Level(worst) != 0 {
			t.Fatalf("minimize %v: best at %g (level %d), worst at %g (level %d)", minimize, hm.Place(best), hm.Level(best),
				hm.Place(worst), hm.Level(worst))
		}
		prev := -1
		for v := worst; (v <= best) != minimize || v == best; v += (best - worst) / 16 {
			if l := hm.Level(v); l < prev {
				t.Fatalf("minimize %v: %g at level %d, below the level %d of a worse value", minimize, v, l, prev)
			} else {
				prev = l
			}
			if v == best {
				break
			}
		}
	}
}

// TestSweepViewHeatmapOfAMillionCells: a sample of 8 of a 1000 × 1000
// grid: the heatmap shows the window around the best run, the cells the
// sample left out marked as such, its values' range over the whole plane.
func TestSweepViewHeatmapOfAMillionCells(t *testing.T) {
	rec := loadSweep(t, "wide")
	ts := newTestSweep(t, rec, 80, 24)
	// Before any result: every cell empty, the window at the start.
	if heat := ansi.Strip(ts.m.heatmapView(themes.Plain(), 78, 14)); !regexp.MustCompile(`x 1–\d+ of 1000, y 1–\d+ of 1000`).MatchString(heat) {
		t.Fatalf("before any result:\n%s", heat)
	}
	ts.feed(t, rec.results, rec.doc, true)
	heat := ansi.Strip(ts.m.heatmapView(themes.Plain(), 78, 14))
	lines := strings.Split(heat, "\n")
	// The best, #41053, is fast=42, slow=54 (and selected: it ranks first).
	var best, labels string
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "54 ") {
			best = l
		}
		if strings.HasSuffix(l, "→ fast") {
			labels = l
		}
	}
	at := strings.Index(labels, " 42 ") + 1
	if best == "" || at == 0 || !strings.HasPrefix(string([]rune(best)[at:]), components.BestMark) {
		t.Fatalf("the best cell (fast=42, slow=54) is not marked %s:\n%s", components.BestMark, heat)
	}
	if !regexp.MustCompile(`x \d+–\d+ of 1000, y \d+–\d+ of 1000 \(H J K L pan, \+ - zoom\)`).MatchString(heat) {
		t.Errorf("the heatmap does not say which part of the plane it shows:\n%s", heat)
	}
	for _, want := range []string{
		components.NotPlannedMark + " not in the sweep (not sampled)",
		// The range is the plane's: its worst value (0) is of runs far
		// from the window shown.
		"worst 0 ", " 68.27 best",
	} {
		if !strings.Contains(heat, want) {
			t.Errorf("the heatmap does not say %q:\n%s", want, heat)
		}
	}
	if strings.Contains(heat, components.NoRunMark) || strings.Count(heat, components.NotPlannedMark+"  ") < 100 {
		t.Errorf("the cells around the best are those the sample left out (%s), none to come (%s):\n%s", components.NotPlannedMark, components.NoRunMark, heat)
	}
}

// TestSweepViewHeatmapCentresOnTheBest: of two runs of the best value,
// the list ranks (and marks ★) the lower index, and the heatmap's window
// is around that one, also when the other comes first in the plane's
// rows. Here the sample's #474093 moves to fast=475, slow=10 with the
// best's sharpe: above the best (#41053, fast=42, slow=54) in the rows,
// after it in the grid's order.
func TestSweepViewHeatmapCentresOnTheBest(t *testing.T) {
	rec := loadSweep(t, "wide")
	var bestMetrics json.RawMessage
	for _, r := range rec.results {
		if r.Index == 41053 {
			bestMetrics = r.Metrics
		}
	}
	for i := range rec.results {
		if r := &rec.results[i]; r.Index == 474093 {
			r.Index, r.Params, r.Metrics = 474*1000+9, sweep.Params{{Name: "fast", Value: int64(475)}, {Name: "slow", Value: int64(10)}}, bestMetrics
		}
	}
	ts := newTestSweep(t, rec, 80, 24)
	ts.feed(t, rec.results, rec.doc, true)
	if best := ts.m.best(); best == nil || best.r.Index != 41053 {
		t.Fatalf("the list's best: %+v, want #41053", best)
	}
	heat := ansi.Strip(ts.m.heatmapView(themes.Plain(), 78, 14))
	if !strings.Contains(heat, components.BestMark) || !strings.Contains(heat, " 42 ") || strings.Contains(heat, " 475 ") {
		t.Fatalf("the window is not around the run marked %s (fast=42, slow=54):\n%s", components.BestMark, heat)
	}
}

// BenchmarkSweepViewHeatmapOfAMillionCells draws the heatmap of a sample
// of 8 of a 1000 × 1000 grid, as every frame of the sweep view does.
func BenchmarkSweepViewHeatmapOfAMillionCells(b *testing.B) {
	rec, ts := endedSweep(b, "wide", 80, 24, nil)
	if len(ts.m.runs) != len(rec.results) {
		b.Fatalf("%d runs in the view, %d fed", len(ts.m.runs), len(rec.results))
	}
	b.ResetTimer()
	for b.Loop() {
		ts.m.heatmapView(themes.Plain(), 78, 14)
	}
}

// BenchmarkSweepViewHeatmapOfManyRuns draws the heatmap of a 20 × 20 plane
// of a sweep of 100,000 runs (a third axis of 250 values): a frame costs
// the plane's cells, not the runs.
func BenchmarkSweepViewHeatmapOfManyRuns(b *testing.B) {
	rec := loadSweep(b, "wide")
	values := func(n int) []any {
		v := make([]any, n)
		for i := range v {
			v[i] = int64(i)
		}
		return v
	}
	doc := *rec.doc
	doc.Spec.Grid = sweep.Grid{{Name: "a", Values: values(20)}, {Name: "b", Values: values(20)}, {Name: "c", Values: values(250)}}
	rec.doc, rec.planned = &doc, nil
	rec.results = nil
	for i := range int64(100_000) {
		rec.results = append(rec.results, sweep.Result{Index: i, Status: sweep.RunPassed, JobID: fmt.Sprint(i),
			Params:  sweep.Params{{Name: "a", Value: i / 5000}, {Name: "b", Value: i / 250 % 20}, {Name: "c", Value: i % 250}},
			Metrics: json.RawMessage(fmt.Sprintf(`{"sharpe": %d}`, i%977))})
	}
	ts := newTestSweep(b, rec, 80, 24)
	for i := 0; i < len(rec.results); i += maxUpdates {
		ts.feed(b, rec.results[i:min(i+maxUpdates, len(rec.results))], nil, false) // what one read takes
	}
	if len(ts.m.runs) != len(rec.results) {
		b.Fatalf("%d runs in the view, %d fed", len(ts.m.runs), len(rec.results))
	}
	ts.feed(b, nil, &doc, true)
	b.ResetTimer()
	for b.Loop() {
		ts.m.heatmapView(themes.Plain(), 78, 14)
	}
}

// TestSweepViewOpenedRunListsArtifacts: in a run opened from the sweep
// view, a lists the job's artifacts, as in the workbench (the listing and
// the opener's end reach the opened run), and the mouse wheel scrolls its
// panes.
func TestSweepViewOpenedRunListsArtifacts(t *testing.T) {
	store := uitest.NewStore(t)
	rec, ts := endedSweep(t, "grid", 120, 40, store)
	best := rec.doc.Best.JobID
	job := fixtures.Load(t, "passed")
	uitest.SaveJob(t, store, job.ReportAs(best), job.Logs, job.Equity)
	ts.openSelected(t)
	_, cmd := ts.m.Update(uitest.Press("a"))
	if cmd == nil {
		t.Fatal("a listed nothing")
	}
	ts.m.Update(cmd())
	screen := ansi.Strip(ts.m.View().Content)
	if !strings.Contains(screen, "Artifacts · ") || !strings.Contains(screen, "equity.csv") {
		t.Fatalf("a does not list the run's artifacts:\n%s", screen)
	}
	// esc closes the list first, then goes back to the sweep.
	ts.m.Update(uitest.Press("esc"))
	if screen := ansi.Strip(ts.m.View().Content); ts.m.job == nil || strings.Contains(screen, "Artifacts · ") {
		t.Fatalf("esc did not close the artifacts only:\n%s", screen)
	}
	// The wheel over the logs focuses them (the title's heavy frame).
	ts.m.Update(tea.MouseWheelMsg{X: 5, Y: 20, Button: tea.MouseWheelDown})
	if screen := ansi.Strip(ts.m.View().Content); !strings.Contains(screen, "┏━ 3 Logs") {
		t.Fatalf("the wheel over the logs did not focus them:\n%s", screen)
	}
	ts.m.Update(uitest.Press("esc"))
	if ts.m.job != nil {
		t.Fatal("a second esc did not go back to the sweep")
	}
}

// rowOf returns the line of the runs list that shows run #index.
func rowOf(t *testing.T, screen string, index int64) string {
	t.Helper()
	re := regexp.MustCompile(fmt.Sprintf(`^[┃│](▸| ) +%d  `, index))
	for _, l := range strings.Split(screen, "\n") {
		if re.MatchString(l) {
			return l
		}
	}
	t.Fatalf("no row of run #%d:\n%s", index, screen)
	return ""
}

// TestSweepViewRunColumns: each run's row has the columns a hyperopt
// table has (the objective, return, max drawdown, trades, win rate) from
// its metrics, then its params one column each: at 80 columns too, where
// the params keep their room and the last metrics give way.
func TestSweepViewRunColumns(t *testing.T) {
	rec := loadSweep(t, "grid")
	var best sweep.Result
	for _, r := range rec.results {
		if r.JobID == rec.doc.Best.JobID {
			best = r
		}
	}
	var m struct {
		TotalReturn, MaxDrawdown, WinRate, Sharpe float64
		Trades                                    int64
	}
	if err := json.Unmarshal(best.Metrics, &struct {
		TotalReturn *float64 `json:"total_return"`
		MaxDrawdown *float64 `json:"max_drawdown"`
		WinRate     *float64 `json:"win_rate"`
		Sharpe      *float64 `json:"sharpe"`
		Trades      *int64   `json:"trades"`
	}{&m.TotalReturn, &m.MaxDrawdown, &m.WinRate, &m.Sharpe, &m.Trades}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		w, h    int
		columns string
		cells   []string
	}{
		{120, 40, "SHARPE     RETURN     MAX DD  TRADES        WIN  fast  slow  fail_at",
			[]string{components.MetricText(m.Sharpe), units.Percent(m.TotalReturn), units.Percent(m.MaxDrawdown), units.Count(m.Trades),
				units.Percent(m.WinRate), "2    40       -1"}},
		{80, 24, "SHARPE     RETURN     MAX DD  fast  slow  fail_at",
			[]string{components.MetricText(m.Sharpe), units.Percent(m.TotalReturn), units.Percent(m.MaxDrawdown), "2    40       -1"}},
	} {
		ts := newTestSweep(t, rec, c.w, c.h)
		ts.feed(t, rec.results, rec.doc, true)
		screen := ansi.Strip(ts.m.View().Content)
		if !strings.Contains(screen, c.columns) {
			t.Errorf("%dx%d: the runs list's columns are not %q:\n%s", c.w, c.h, c.columns, screen)
		}
		row := rowOf(t, screen, best.Index)
		at := 0
		for _, cell := range c.cells {
			i := strings.Index(row[at:], cell)
			if i < 0 {
				t.Fatalf("%dx%d: the best run's row %q has no %q after column %d", c.w, c.h, row, cell, at)
			}
			at += i + len(cell)
		}
	}
}

// TestSweepViewFailedRowSaysWhy: a failed run's row says why it failed
// (the line of its report's failure message that says most), read from
// its job once it is on screen, and once only; the kind alone when its
// report cannot be read.
func TestSweepViewFailedRowSaysWhy(t *testing.T) {
	rec := loadSweep(t, "failures")
	store := rec.store(t)
	why := map[int64]string{}
	for _, r := range rec.results {
		if r.Status == sweep.RunPassed {
			continue
		}
		rep, err := store.Load(r.JobID)
		if err != nil || rep.Failure == nil {
			t.Fatalf("the recording has no failure for %s: %v", r.JobID, err)
		}
		why[r.Index] = words.Summary(rep.Failure)
	}
	ts := newTestSweep(t, rec, 120, 40)
	ts.feed(t, rec.results, rec.doc, true)
	ts.readReasons()
	if cmd := ts.m.wantReasons(); cmd != nil {
		t.Fatal("the view asks again for reasons it has")
	}
	screen := ansi.Strip(ts.m.View().Content)
	kinds := map[string]bool{}
	for index, text := range why {
		if index > 10 {
			continue // below the list's rows at 120x40
		}
		row := rowOf(t, screen, index)
		if want := []rune(text)[:min(40, len([]rune(text)))]; !strings.Contains(row, string(want)) {
			t.Errorf("the row of #%d does not say %q: %q", index, string(want), row)
		}
		kinds[text] = true
	}
	if len(kinds) != 5 {
		t.Errorf("the rows show %d different reasons, want 5 (3 exceptions, a timeout, a crash): %v", len(kinds), kinds)
	}
	// Without its report (a job folder gone), the row keeps the kind.
	ts = newTestSweep(t, rec, 120, 40)
	ts.m.opts.Store = uitest.NewStore(t)
	ts.feed(t, rec.results, rec.doc, true)
	ts.readReasons()
	if row := rowOf(t, ansi.Strip(ts.m.View().Content), 6); !strings.Contains(row, "✗ timeout") || strings.Contains(row, "5s limit") {
		t.Errorf("without its report the row of #6 is %q", row)
	}
}

// TestSweepViewSizes: at every size, with every recording, the screen is
// exactly the terminal's (the wide layout from 160 columns included).
func TestSweepViewSizes(t *testing.T) {
	for _, name := range []string{"grid", "constraint", "random", "walkforward", "wide", "failures"} {
		rec := loadSweep(t, name)
		for _, sz := range [][2]int{{30, 10}, {60, 16}, {80, 24}, {100, 30}, {159, 40}, {160, 40}, {200, 60}, {400, 120}} {
			t.Run(fmt.Sprintf("%s/%dx%d", name, sz[0], sz[1]), func(t *testing.T) {
				ts := newTestSweep(t, rec, sz[0], sz[1])
				ts.feed(t, rec.results, rec.doc, true)
				ts.readReasons()
				uitest.CheckScreen(t, ts.m.View().Content, sz[0], sz[1])
			})
		}
	}
}

// TestSweepViewHeatmapScale: with 256 colours or more each value's cell
// has a colour of its own on a continuous gradient, the best the top of
// it, the worst its bottom, and shows the value; with 16 colours the
// cells degrade to eight levels of a block's height in eight colours, and
// under NO_COLOR to the levels alone, values still shown where they fit.
func TestSweepViewHeatmapScale(t *testing.T) {
	rec := loadSweep(t, "grid")
	bg := regexp.MustCompile(`\x1b\[[0-9;]*48;2;(\d+);(\d+);(\d+)m`)
	for _, c := range []struct {
		profile colorprofile.Profile
		theme   string
	}{{colorprofile.TrueColor, "dark"}, {colorprofile.ANSI256, "dark"}, {colorprofile.ANSI, "dark"}, {colorprofile.TrueColor, "plain"}} {
		ts := newTestSweep(t, rec, 80, 24)
		ts.feed(t, rec.results, rec.doc, true)
		th, err := themes.NamedFor(c.theme, c.profile)
		if err != nil {
			t.Fatal(err)
		}
		ts.m.theme, ts.m.profile = th, c.profile
		heat := ts.m.heatmapView(th, 78, 12)
		plain := ansi.Strip(heat)
		for _, v := range []string{"36.51", "-49.63", "23.79", "0.0556"} {
			if !strings.Contains(plain, v) {
				t.Errorf("%v %s: no value %s in the cells:\n%s", c.profile, c.theme, v, plain)
			}
		}
		colours := map[string]bool{}
		for _, m := range bg.FindAllStringSubmatch(heat, -1) {
			colours[m[1]+","+m[2]+","+m[3]] = true
		}
		levels := strings.Count(plain, components.Levels[0]) + strings.Count(plain, components.Levels[len(components.Levels)-1])
		switch {
		case c.profile >= colorprofile.ANSI256 && c.theme != "plain":
			// 14 different values on the plane of fail_at=-1, the scale's
			// bar adds its own steps; the best is the gradient's top.
			if len(colours) < 14 || !colours["253,231,37"] || !colours["68,1,84"] {
				t.Errorf("%v: %d background colours (want a gradient from 68,1,84 to 253,231,37): %v", c.profile, len(colours), colours)
			}
			if levels != 0 {
				t.Errorf("%v: the gradient's cells also draw levels:\n%s", c.profile, plain)
			}
		default:
			if len(colours) != 0 {
				t.Errorf("%v %s: background colours on a terminal without the gradient: %v", c.profile, c.theme, colours)
			}
			if levels < 2 {
				t.Errorf("%v %s: the cells do not draw their levels:\n%s", c.profile, c.theme, plain)
			}
			if c.theme == "plain" {
				uitest.CheckNoColor(t, heat)
			}
		}
	}
}

// TestSweepViewHeatmapFollowsTheSelection: the heatmap holds the other
// params at the selected run's values, so that the selected run is on it,
// marked ◂, and its window moves to keep it in view.
func TestSweepViewHeatmapFollowsTheSelection(t *testing.T) {
	_, ts := endedSweep(t, "grid", 80, 24, nil)
	ts.m.Update(uitest.Press("G")) // #15: fast=3, slow=40, fail_at=3, failed
	heat := ansi.Strip(ts.m.heatmapView(themes.Plain(), 78, 12))
	if !strings.Contains(heat, "held at the selected run's (#15): fail_at=3") {
		t.Fatalf("the plane is not the selected run's:\n%s", heat)
	}
	if row := heatmapRow(t, ts.m, "40", 78, 12); !strings.HasSuffix(row[1], components.SelectedMark) {
		t.Fatalf("the selected run's cell (fast=3, slow=40) is not marked: %q", row)
	}

	// A plane of 1000 × 1000: selecting a run far from the best moves
	// the window to it.
	_, ts = endedSweep(t, "wide", 80, 24, nil)
	ts.m.View() // the window placed, around the best
	for i := range ts.m.ranked {
		if ts.m.runs[ts.m.ranked[i]].r.Index == 960822 { // fast=961, slow=823
			ts.m.selectRun(i)
		}
	}
	heat = ansi.Strip(ts.m.heatmapView(themes.Plain(), 78, 14))
	row := ""
	for _, l := range strings.Split(heat, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "823 ") {
			row = l
		}
	}
	var x0, x1 int
	if m := regexp.MustCompile(`x (\d+)–(\d+) of 1000`).FindStringSubmatch(heat); m != nil {
		fmt.Sscan(m[1], &x0)
		fmt.Sscan(m[2], &x1)
	}
	if row == "" || !strings.Contains(row, components.SelectedMark) || x0 > 961 || x1 < 961 {
		t.Fatalf("the window did not move to the selected run (fast=961, slow=823):\n%s", heat)
	}
}

// TestSweepViewHeatmapPanAndZoom: H J K L (and shift+arrows) pan the
// heatmap by half its window and it stays there; c centres it on the
// selected run again, as selecting a run does; + and - change the cells'
// width, values showing in the wider ones; the help bar names the keys.
func TestSweepViewHeatmapPanAndZoom(t *testing.T) {
	_, ts := endedSweep(t, "wide", 80, 24, nil)
	ts.m.View()
	shown := regexp.MustCompile(`x (\d+)–(\d+) of 1000, y (\d+)–(\d+) of 1000`)
	window := func() (x0, x1, y0, y1 int) {
		t.Helper()
		m := shown.FindStringSubmatch(ansi.Strip(ts.m.View().Content))
		if m == nil {
			t.Fatalf("the heatmap does not say what it shows:\n%s", ansi.Strip(ts.m.View().Content))
		}
		fmt.Sscan(m[1], &x0)
		fmt.Sscan(m[2], &x1)
		fmt.Sscan(m[3], &y0)
		fmt.Sscan(m[4], &y1)
		return x0, x1, y0, y1
	}
	x0, x1, y0, y1 := window()
	for _, c := range []struct {
		key    tea.KeyPressMsg
		dx, dy int
	}{
		{uitest.Press("L"), 1, 0}, {uitest.Press("J"), 0, 1}, {uitest.Press("H"), -1, 0}, {uitest.Press("K"), 0, -1},
		{tea.KeyPressMsg{Code: tea.KeyRight, Mod: tea.ModShift}, 1, 0}, {tea.KeyPressMsg{Code: tea.KeyDown, Mod: tea.ModShift}, 0, 1},
	} {
		ts.m.Update(c.key)
		nx0, nx1, ny0, ny1 := window()
		if half := (x1 - x0 + 1) / 2; nx0 != x0+c.dx*half || nx1 != x1+c.dx*half {
			t.Fatalf("%s: x %d–%d, want %d–%d", c.key, nx0, nx1, x0+c.dx*half, x1+c.dx*half)
		}
		if half := (y1 - y0 + 1) / 2; ny0 != y0+c.dy*half || ny1 != y1+c.dy*half {
			t.Fatalf("%s: y %d–%d, want %d–%d", c.key, ny0, ny1, y0+c.dy*half, y1+c.dy*half)
		}
		x0, x1, y0, y1 = nx0, nx1, ny0, ny1
	}
	for range 3 {
		ts.m.Update(uitest.Press("L"))
	}
	if cells, _ := heatmapCellsAndLegend(t, ansi.Strip(ts.m.heatmapView(themes.Plain(), 78, 14))); strings.Contains(cells, components.BestMark) {
		t.Fatalf("panned away, the selected run's cell (the best) is still drawn:\n%s", cells)
	}
	ts.m.Update(uitest.Press("c"))
	if cells, _ := heatmapCellsAndLegend(t, ansi.Strip(ts.m.heatmapView(themes.Plain(), 78, 14))); !strings.Contains(cells, components.BestMark) {
		t.Fatalf("c did not bring the selected run (the best) back:\n%s", cells)
	}

	_, ts = endedSweep(t, "grid", 80, 24, nil)
	widths := []int{}
	for _, k := range []string{"-", "-", "-", "-", "+", "+", "+", "+", "+"} {
		ts.m.Update(uitest.Press(k))
		widths = append(widths, ts.m.heatGeometry().CellW)
	}
	if want := []int{7, 5, 3, 3, 5, 7, 9, 12, 15}; !slices.Equal(widths, want) {
		t.Fatalf("- and + give cells of %v, want %v", widths, want)
	}
	if row := heatmapRow(t, ts.m, "40", 78, 12); !strings.Contains(row[0], "36.51") {
		t.Fatalf("zoomed in, the best cell does not show its value: %q", row)
	}
	for range 5 {
		ts.m.Update(uitest.Press("-"))
	}
	if row := heatmapRow(t, ts.m, "40", 78, 12); strings.ContainsAny(row[0], "0123456789") || !strings.HasPrefix(row[1], "██") {
		t.Fatalf("at 3 cells wide the cells show values, not levels: %q", row)
	}
	if footer := ansi.Strip(ts.m.View().Content); !strings.Contains(footer, "HJKL pan • +/- zoom") {
		t.Fatalf("the help bar does not name the pan and zoom keys:\n%s", footer)
	}
}

// TestGoldenSweepViewColour pins the heatmap's colours, escape codes and
// all, in the dark theme: the gradient (256 colours or more; Bubble Tea
// downsamples it to 256) and the levels of a 16-colour terminal.
func TestGoldenSweepViewColour(t *testing.T) {
	rec := loadSweep(t, "grid")
	for _, c := range []struct {
		name    string
		profile colorprofile.Profile
	}{{"truecolor", colorprofile.TrueColor}, {"16", colorprofile.ANSI}} {
		t.Run(c.name, func(t *testing.T) {
			ts := newTestSweep(t, rec, 120, 40)
			ts.feed(t, rec.results, rec.doc, true)
			th, err := themes.NamedFor("dark", c.profile)
			if err != nil {
				t.Fatal(err)
			}
			ts.m.theme, ts.m.profile = th, c.profile
			out := ts.m.View().Content
			uitest.CheckScreen(t, out, 120, 40)
			golden.RequireEqual(t, out)
		})
	}
}

// newWatchedSweep is the view of a recorded sweep that this process does
// not run (stratbench sweep view): no Stop. When ended, it starts with
// the sweep's last document and every result, as a finished sweep is
// read; else with the first half of its results, as one read while it
// runs elsewhere.
func newWatchedSweep(t testing.TB, rec recordedSweep, w, h int, ended, back bool) *testSweep {
	t.Helper()
	ts := &testSweep{updates: make(chan Update, 1024)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	doc, prior := rec.startDoc(), rec.results[:len(rec.results)/2]
	if ended {
		d := *rec.doc
		d.Runs = nil
		doc, prior = &d, rec.results
	}
	opts := Options{Start: Start{Doc: doc, Total: rec.doc.Counts.Total, Folds: rec.folds, Prior: prior, Planned: rec.planned},
		Updates: ts.updates, Back: back}
	if rec.jobs != "" {
		opts.Store = rec.store(t)
	}
	ts.m = newSweepModel(ctx, opts, themes.Plain(), false)
	ts.m.now = func() time.Time { return rec.doc.StartedAt.Add(time.Hour) }
	ts.m.reset(opts.Start)
	ts.m.Update(uitest.Size(w, h))
	if ended {
		ts.updates <- Update{Doc: doc, Ended: true}
		ts.m.Update(ts.m.waitUpdates()())
	}
	return ts
}

// TestGoldenSweepViewWatched renders the view of sweeps this process
// does not run: one that has ended (read whole) and one that runs
// elsewhere (half its results read so far).
func TestGoldenSweepViewWatched(t *testing.T) {
	for _, c := range []struct {
		name, sweep string
		ended       bool
	}{{"ended", "failures", true}, {"running", "grid", false}} {
		for _, sz := range uitest.GoldenSizes {
			t.Run(fmt.Sprintf("%s/%dx%d", c.name, sz[0], sz[1]), func(t *testing.T) {
				ts := newWatchedSweep(t, loadSweep(t, c.sweep), sz[0], sz[1], c.ended, true)
				ts.readReasons()
				out := ts.m.View().Content
				uitest.CheckGolden(t, out, sz[0], sz[1])
			})
		}
	}
}

// TestSweepViewWatchOnly: the view of a sweep it does not run stops
// nothing: q quits at once, s does nothing and is not offered, and the
// header says that q leaves a running sweep running, or how long an ended
// one took. esc goes back to the list it was opened from (Back), and
// only then.
func TestSweepViewWatchOnly(t *testing.T) {
	rec := loadSweep(t, "grid")
	ts := newWatchedSweep(t, rec, 120, 40, false, false)
	screen := ansi.Strip(ts.m.View().Content)
	if !strings.Contains(screen, "RUNNING") || !strings.Contains(screen, "watching: q leaves it running") || strings.Contains(screen, "s stop") {
		t.Fatalf("a sweep watched while it runs:\n%s", screen)
	}
	ts.m.Update(uitest.Press("s"))
	if ts.m.state != sweepRunning {
		t.Fatal("s stopped a sweep the view only watches")
	}
	if _, cmd := ts.m.Update(uitest.Press("esc")); cmd != nil || ts.m.back {
		t.Fatal("esc left a view not opened from the list")
	}
	if _, cmd := ts.m.Update(uitest.Press("q")); cmd == nil {
		t.Fatal("q did not quit at once")
	} else if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("q's command is not a quit")
	}

	ts = newWatchedSweep(t, rec, 120, 40, true, true)
	screen = ansi.Strip(ts.m.View().Content)
	if took := "took " + units.Millis(float64(rec.doc.DurationMS)); !strings.Contains(screen, took) || !strings.Contains(screen, "FAILED") {
		t.Fatalf("an ended sweep watched does not say FAILED and %q:\n%s", took, screen)
	}
	if !strings.Contains(screen, "esc sweeps") {
		t.Fatalf("the help bar does not say esc goes back to the sweeps:\n%s", screen)
	}
	if _, cmd := ts.m.Update(uitest.Press("esc")); cmd == nil || !ts.m.back {
		t.Fatal("esc did not go back to the list")
	}
}

// TestSweepViewShowsTheVerdict: once the sweep has ended, the header says
// its robustness verdict and the two figures it reads; not while it runs.
func TestSweepViewShowsTheVerdict(t *testing.T) {
	rec := loadSweep(t, "grid")
	ts := newTestSweep(t, rec, 160, 40)
	doc := *rec.doc
	doc.Robustness = &sweep.Robustness{Trials: 12, DeflatedSharpe: 0.3125, PBO: 0.6, Verdict: "likely overfit"}
	ts.feed(t, rec.results[:2], &doc, false)
	line := strings.Split(ansi.Strip(ts.m.View().Content), "\n")[1]
	if strings.Contains(line, "overfit") {
		t.Fatalf("running: %q", line)
	}
	ts.feed(t, rec.results[2:], &doc, true)
	line = strings.Split(ansi.Strip(ts.m.View().Content), "\n")[1]
	if want := "likely overfit (deflated Sharpe 0.31, PBO 0.60)"; !strings.Contains(line, want) {
		t.Fatalf("ended: %q, want %q", line, want)
	}
}
