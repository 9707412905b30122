package sweep

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// metrics is a report's metrics object with the values ranking reads.
func metrics(sharpe, totalReturn float64) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"start_equity":10000,"final_equity":%v,"total_return":%v,"sharpe":%v,"fills":4,"trades":2}`,
		10000*(1+totalReturn), totalReturn, sharpe))
}

func passed(index int64, sharpe float64) Result {
	return Result{Index: index, Params: Params{{"fast", index}}, JobID: fmt.Sprintf("job-%d", index), Status: RunPassed,
		Metrics: metrics(sharpe, sharpe/10), Fingerprint: "fp", OrdersHash: "oh", DurationMS: 10}
}

func failed(index int64) Result {
	return Result{Index: index, Params: Params{{"fast", index}}, JobID: fmt.Sprintf("job-%d", index), Status: RunFailed,
		FailureKind: "exception", Metrics: metrics(99, 9.9), Fingerprint: "fp", OrdersHash: "oh", DurationMS: 10}
}

func indices(results []Result) []int64 {
	var out []int64
	for _, r := range results {
		out = append(out, r.Index)
	}
	return out
}

func TestResultLineJSON(t *testing.T) {
	r := Result{Index: 3, Params: Params{{"fast", int64(10)}, {"slow", int64(50)}, {"stop", 0.5}, {"w", 2.0}},
		JobID: "20260105-000000.000-abcd", Status: RunPassed, Metrics: json.RawMessage(`{"sharpe":1.5}`),
		Fingerprint: "f1", OrdersHash: "o1", DurationMS: 412}
	want := `{"index":3,"fold":null,"phase":null,"params":{"fast":10,"slow":50,"stop":0.5,"w":2.0},` +
		`"job_id":"20260105-000000.000-abcd","status":"passed","failure_kind":null,"metrics":{"sharpe":1.5},` +
		`"fingerprint":"f1","orders_hash":"o1","duration_ms":412}`
	data, err := json.Marshal(r)
	if err != nil || string(data) != want {
		t.Fatalf("line %s (%v)\nwant %s", data, err, want)
	}
	back := roundTrip(t, r)
	if !slices.Equal(back.Params, r.Params) || back.Fold != nil || back.Phase != PhaseNone || string(back.Metrics) != `{"sharpe":1.5}` {
		t.Fatalf("read back %+v", back)
	}
	// A failed walk-forward test run.
	f := Result{Index: 7, Fold: ptr(2), Phase: PhaseTest, Params: Params{}, JobID: "j", Status: RunFailed, FailureKind: "timeout"}
	want = `{"index":7,"fold":2,"phase":"test","params":{},"job_id":"j","status":"failed","failure_kind":"timeout",` +
		`"metrics":null,"fingerprint":"","orders_hash":"","duration_ms":0}`
	if data, err := json.Marshal(f); err != nil || string(data) != want {
		t.Fatalf("line %s (%v)\nwant %s", data, err, want)
	}
	if back := roundTrip(t, f); *back.Fold != 2 || back.Phase != PhaseTest || back.FailureKind != "timeout" || back.Metrics != nil {
		t.Fatalf("read back %+v", back)
	}
	for _, tc := range []struct{ line, want string }{
		{`{"index":1,"fold":null,"phase":null,"params":{},"status":"stopped"}`, `status "stopped": a result is "passed" or "failed" (a stopped run has no result)`},
		{`{"index":1,"fold":null,"phase":null,"params":{},"status":"failed","failure_kind":null}`, `a failed run without its failure_kind`},
		{`{"index":1,"fold":null,"phase":null,"params":{},"status":"passed","failure_kind":"crash"}`, `a passed run with failure_kind "crash"`},
		{`{"index":1,"fold":null,"phase":"train","params":{},"status":"passed"}`, `phase "train" without a fold`},
		{`{"index":1,"fold":0,"phase":null,"params":{},"status":"passed"}`, `fold 0 with phase "": want "train" or "test"`},
		{`{"index":-1,"params":{},"status":"passed"}`, `index -1 is negative`},
		{`{"index":1,"params":{"a":[1]},"status":"passed"}`, `param a: a param value must be an int, float, bool or string, not [1]`},
		{`{"index":1,"params":{"a":1,"a":2},"status":"passed"}`, `"a" appears twice`},
	} {
		var r Result
		if err := json.Unmarshal([]byte(tc.line), &r); err == nil || err.Error() != tc.want {
			t.Fatalf("%s: %v, want %q", tc.line, err, tc.want)
		}
	}
}

func TestRanking(t *testing.T) {
	results := []Result{failed(0), passed(5, 1.2), passed(2, 1.2), passed(3, -0.5), failed(1), passed(4, 2.0), passed(6, 0)}
	// A passed run whose metrics lack the objective ranks after the
	// others that passed, and is never best.
	results = append(results, Result{Index: 8, Params: Params{}, JobID: "job-8", Status: RunPassed, Metrics: json.RawMessage(`{"trades":1}`)})
	max := Objective{Metric: "sharpe"}
	best := max.Best(results)
	if best == nil || best.Index != 4 || best.Value != 2.0 || best.JobID != "job-4" || best.Metric != "sharpe" {
		t.Fatalf("best %+v", best)
	}
	sorted := slices.Clone(results)
	max.Sort(sorted)
	if got, want := indices(sorted), []int64{4, 2, 5, 6, 3, 8, 0, 1}; !slices.Equal(got, want) {
		t.Fatalf("sorted %v, want %v (ties to the lower index, failed last)", got, want)
	}
	min := Objective{Metric: "sharpe", Minimize: true}
	if b := min.Best(results); b.Index != 3 || b.Value != -0.5 {
		t.Fatalf("minimised best %+v", b)
	}
	min.Sort(sorted)
	if got, want := indices(sorted), []int64{3, 6, 2, 5, 4, 8, 0, 1}; !slices.Equal(got, want) {
		t.Fatalf("minimised %v, want %v", got, want)
	}
	// Ties go to the lower index whatever the order of the results.
	tie := []Result{passed(9, 1), passed(7, 1), passed(8, 1)}
	if b := max.Best(tie); b.Index != 7 {
		t.Fatalf("tie best %d, want 7", b.Index)
	}
	// None passed: no best.
	if b := max.Best([]Result{failed(0), failed(1)}); b != nil {
		t.Fatalf("best of failed runs %+v", b)
	}
	if b := max.Best(nil); b != nil {
		t.Fatalf("best of nothing %+v", b)
	}
}

func TestDocumentJSON(t *testing.T) {
	s := mustSpec(t, Flags{Grid: []string{"fast=5,10", "stop=0.5:1:0.5"}, Params: []string{"slow=60"}}, manifest)
	plan := mustPlan(t, s)
	start := time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)
	doc := &Document{SweepID: "sw-20260105-093000.000-1a2b", Status: StatusRunning,
		Strategy: StrategyRef{"strategy.py", "abc"}, Data: DataRef{"bundled:synthetic", "", "", "dfp"},
		Spec: s.Doc(), Executor: Executor{Kind: ExecutorLocal}, StartedAt: start}
	doc.Spec.Jobs = 2
	doc.Tally(plan, nil, []Result{failed(1), passed(0, 0.5), passed(3, 0.7)})
	doc.Finish(false, start.Add(1500*time.Millisecond))
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"sweep_id":"sw-20260105-093000.000-1a2b","status":"failed",` +
		`"strategy":{"path":"strategy.py","sha256":"abc"},` +
		`"data":{"source":"bundled:synthetic","from":"","to":"","fingerprint":"dfp"},` +
		`"spec":{"grid":{"fast":[5,10],"stop":[0.5,1.0]},"params":{"slow":60},"constraint":null,"random":null,"seed":0,` +
		`"metric":"sharpe","minimize":false,"jobs":2,"walk_forward":null},` +
		`"executor":{"kind":"local"},"counts":{"total":4,"done":3,"passed":2,"failed":1},` +
		`"best":{"index":3,"params":{"fast":3},"metric":"sharpe","value":0.7,"job_id":"job-3"},` +
		`"robustness":null,"robustness_reason":null,` +
		`"runs":[` + line(passed(3, 0.7)) + `,` + line(passed(0, 0.5)) + `,` + line(failed(1)) + `],` +
		`"started_at":"2026-01-05T09:30:00Z","finished_at":"2026-01-05T09:30:01.5Z","duration_ms":1500}`
	if string(data) != want {
		t.Fatalf("document\n%s\nwant\n%s", data, want)
	}
	sum, err := json.Marshal(doc.Summary())
	if err != nil {
		t.Fatal(err)
	}
	wantSum := `{"type":"summary","sweep":` + strings.Replace(want, `"runs":[`+line(passed(3, 0.7))+`,`+line(passed(0, 0.5))+`,`+line(failed(1))+`],`, "", 1) + `}`
	if string(sum) != wantSum {
		t.Fatalf("summary\n%s\nwant\n%s", sum, wantSum)
	}
	back := roundTrip(t, *doc)
	if again, _ := json.Marshal(back); string(again) != want {
		t.Fatalf("read back\n%s\nwant\n%s", again, want)
	}
	// No run yet: runs is [], best null.
	doc.Tally(plan, nil, nil)
	doc.Status, doc.FinishedAt, doc.DurationMS = StatusRunning, nil, 0
	data, _ = json.Marshal(doc)
	if !strings.Contains(string(data), `"counts":{"total":4,"done":0,"passed":0,"failed":0},"best":null,"robustness":null,"robustness_reason":null,"runs":[],"started_at"`) ||
		!strings.HasSuffix(string(data), `"finished_at":null,"duration_ms":0}`) {
		t.Fatalf("empty document %s", data)
	}
	for _, tc := range []struct {
		stopped bool
		results []Result
		want    Status
	}{
		{false, []Result{passed(0, 1)}, StatusPassed},
		{false, []Result{passed(0, 1), failed(1)}, StatusFailed},
		{true, []Result{passed(0, 1)}, StatusStopped},
		{true, []Result{failed(1)}, StatusStopped},
	} {
		doc.Tally(plan, nil, tc.results)
		doc.Finish(tc.stopped, start)
		if doc.Status != tc.want {
			t.Fatalf("stopped %v with %v: %s, want %s", tc.stopped, tc.results, doc.Status, tc.want)
		}
	}
}

// TestExecutorJSON: the executor has the keys of its kind in every
// document: a Ray sweep's "address" and "ray_jobs" from its first save,
// before any Ray job is submitted ([], not left out).
func TestExecutorJSON(t *testing.T) {
	for _, tc := range []struct {
		e    Executor
		want string
	}{
		{Executor{Kind: ExecutorLocal}, `{"kind":"local"}`},
		{Executor{Kind: ExecutorRay, Address: "http://head:8265"}, `{"kind":"ray","address":"http://head:8265","ray_jobs":[]}`},
		{Executor{Kind: ExecutorRay, Address: "http://head:8265", RayJobs: []string{"raysubmit_1"}},
			`{"kind":"ray","address":"http://head:8265","ray_jobs":["raysubmit_1"]}`},
		// Resumed locally after Ray: the Ray jobs stay for a later resume
		// on Ray to stop.
		{Executor{Kind: ExecutorLocal, Address: "http://head:8265", RayJobs: []string{"raysubmit_1"}},
			`{"kind":"local","address":"http://head:8265","ray_jobs":["raysubmit_1"]}`},
	} {
		data, err := json.Marshal(tc.e)
		if err != nil || string(data) != tc.want {
			t.Errorf("%+v: %s, %v, want %s", tc.e, data, err, tc.want)
		}
		if back := roundTrip(t, tc.e); back.Kind != tc.e.Kind || back.Address != tc.e.Address || len(back.RayJobs) != len(tc.e.RayJobs) {
			t.Errorf("%+v read back as %+v", tc.e, back)
		}
	}
}

func line(r Result) string {
	data, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	return string(data)
}

// wfResult is a walk-forward result of fold k.
func wfResult(k int, phase Phase, index int64, status RunStatus, sharpe, totalReturn float64) Result {
	r := Result{Index: index, Fold: ptr(k), Phase: phase, Params: Params{{"fast", index}},
		JobID: fmt.Sprintf("job-%d-%s-%d", k, phase, index), Status: status, Metrics: metrics(sharpe, totalReturn)}
	if status == RunFailed {
		r.FailureKind = "crash"
	}
	return r
}

func TestWalkForwardDocument(t *testing.T) {
	s := mustSpec(t, Flags{Grid: []string{"fast=0,1"}, WalkForward: "train=2d,test=1d"}, manifest)
	plan := mustPlan(t, s)
	folds, err := s.WalkForward().Folds(week, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	folds = folds[:3]
	results := []Result{
		// Fold 0: combination 1 is best (sharpe 2), made 4% in 2 days, then 1% in its test day.
		wfResult(0, PhaseTrain, 0, RunPassed, 1, 0.02), wfResult(0, PhaseTrain, 1, RunPassed, 2, 0.04),
		wfResult(0, PhaseTest, 1, RunPassed, 0.5, 0.01),
		// Fold 1: a tie: combination 0 (the lower index) is best.
		wfResult(1, PhaseTrain, 1, RunPassed, 3, 0.10), wfResult(1, PhaseTrain, 0, RunPassed, 3, 0.06),
		wfResult(1, PhaseTest, 0, RunPassed, -1, -0.02),
		// Fold 2: combination 0 failed, 1 passed.
		wfResult(2, PhaseTrain, 0, RunFailed, 9, 0.5), wfResult(2, PhaseTrain, 1, RunPassed, 0.1, 0.01),
		wfResult(2, PhaseTest, 1, RunPassed, 1, 0.03),
	}
	doc := &Document{Spec: s.Doc()}
	doc.Tally(plan, folds, results)
	if doc.Counts != (Counts{Total: 9, Done: 9, Passed: 8, Failed: 1}) {
		t.Fatalf("counts %+v", doc.Counts)
	}
	if doc.Best == nil || doc.Best.Index != 1 || doc.Best.JobID != "job-2-train-1" {
		t.Fatalf("best %+v: want the last fold's", doc.Best)
	}
	wf := doc.WalkForward
	if len(wf.Folds) != 3 {
		t.Fatalf("folds %+v", wf.Folds)
	}
	if f := wf.Folds[1]; !slices.Equal(f.BestParams, Params{{"fast", int64(0)}}) || *f.InSample != (InSample{"sharpe", 3, 0.06}) ||
		*f.JobID != "job-1-test-0" || !strings.Contains(string(f.OutOfSample), `"total_return":-0.02`) {
		t.Fatalf("fold 1 %+v", f)
	}
	// Stitched: 1.01 · 0.98 · 1.03 − 1, over 3 days.
	wantReturn := 1.01*0.98*1.03 - 1
	st := wf.OutOfSample
	if st == nil || st.Folds != 3 || !near(st.TotalReturn, wantReturn) || st.StartEquity != 10000 ||
		!near(st.FinalEquity, 10000*(1+wantReturn)) || st.Fills != 12 || st.Trades != 6 ||
		!near(st.CAGR, math.Pow(1+wantReturn, 365.25/3)-1) {
		t.Fatalf("stitched %+v, want a total return of %v", st, wantReturn)
	}
	// Efficiency: the mean of (test return / 1 day) / (train return / 2 days).
	wantEff := ((0.01/1)/(0.04/2) + (-0.02/1)/(0.06/2) + (0.03/1)/(0.01/2)) / 3
	if wf.Efficiency == nil || !near(*wf.Efficiency, wantEff) {
		t.Fatalf("efficiency %v, want %v", wf.Efficiency, wantEff)
	}
	// Runs: by fold, train before test, then the objective; failed last.
	if got, want := indices(doc.Runs), []int64{1, 0, 1, 0, 1, 0, 1, 0, 1}; !slices.Equal(got, want) {
		t.Fatalf("runs %v, want %v", got, want)
	}
	if doc.Runs[6].Status != RunPassed || doc.Runs[7].Status != RunFailed || doc.Runs[8].Phase != PhaseTest {
		t.Fatalf("fold 2 runs %+v", doc.Runs[6:])
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"walk_forward":{"folds":[{"train":{"from":"2026-01-05T00:00:00Z","to":"2026-01-07T00:00:00Z"},`+
		`"test":{"from":"2026-01-07T00:00:00Z","to":"2026-01-08T00:00:00Z"},"best_params":{"fast":1},`+
		`"in_sample":{"metric":"sharpe","value":2,"return":0.04},"out_of_sample":{"start_equity":10000,`) ||
		!strings.Contains(string(data), `"spec":{"grid":{"fast":[0,1]},"params":{},"constraint":null,"random":null,"seed":0,"metric":"sharpe","minimize":false,"jobs":0,`+
			`"walk_forward":{"train":"2d","test":"1d","step":"1d","anchored":false}}`) {
		t.Fatalf("document %s", data)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestEfficiencyNull(t *testing.T) {
	s := mustSpec(t, Flags{Grid: []string{"fast=0,1"}, WalkForward: "train=2d,test=1d"}, manifest)
	plan := mustPlan(t, s)
	allFolds, err := s.WalkForward().Folds(week, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	folds := allFolds[:2]
	good := []Result{
		wfResult(0, PhaseTrain, 0, RunPassed, 1, 0.02), wfResult(0, PhaseTest, 0, RunPassed, 1, 0.01),
		wfResult(1, PhaseTrain, 0, RunPassed, 1, 0.02), wfResult(1, PhaseTest, 0, RunPassed, 1, 0.01),
	}
	for _, tc := range []struct {
		name    string
		results []Result
		total   int64
		// stitched folds; -1 for none
		stitched int
	}{
		{"an in-sample return of 0", []Result{
			wfResult(0, PhaseTrain, 0, RunPassed, 1, 0), wfResult(0, PhaseTest, 0, RunPassed, 1, 0.01),
			good[2], good[3]}, 6, 2},
		{"an in-sample loss", []Result{
			wfResult(0, PhaseTrain, 0, RunPassed, 1, 0.02), wfResult(0, PhaseTest, 0, RunPassed, 1, 0.01),
			wfResult(1, PhaseTrain, 0, RunPassed, 1, -0.02), wfResult(1, PhaseTest, 0, RunPassed, 1, 0.01)}, 6, 2},
		{"a failed test run", []Result{good[0], good[1], good[2], wfResult(1, PhaseTest, 0, RunFailed, 0, 0)}, 6, 1},
		{"a fold where no train run passed", []Result{good[0], good[1],
			wfResult(1, PhaseTrain, 0, RunFailed, 0, 0), wfResult(1, PhaseTrain, 1, RunFailed, 0, 0)}, 5, 1},
		{"a fold not run yet", good[:2], 6, 1},
		{"nothing run", nil, 6, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := &Document{Spec: s.Doc()}
			doc.Tally(plan, folds, tc.results)
			wf := doc.WalkForward
			if wf.Efficiency != nil {
				t.Fatalf("efficiency %v, want null", *wf.Efficiency)
			}
			if doc.Counts.Total != tc.total {
				t.Fatalf("total %d, want %d", doc.Counts.Total, tc.total)
			}
			switch {
			case tc.stitched < 0 && wf.OutOfSample != nil:
				t.Fatalf("stitched %+v, want null", wf.OutOfSample)
			case tc.stitched >= 0 && (wf.OutOfSample == nil || wf.OutOfSample.Folds != tc.stitched):
				t.Fatalf("stitched %+v, want %d folds", wf.OutOfSample, tc.stitched)
			}
		})
	}
	doc := &Document{Spec: s.Doc()}
	doc.Tally(plan, folds, good)
	if doc.WalkForward.Efficiency == nil || !near(*doc.WalkForward.Efficiency, 1) {
		t.Fatalf("efficiency %v, want 1: the test days earned at the train days' rate", doc.WalkForward.Efficiency)
	}
	data, _ := json.Marshal(doc.WalkForward)
	if !strings.HasSuffix(string(data), `"efficiency":1}`) {
		t.Fatalf("walk_forward %s", data)
	}
	// A fold whose train runs all failed: null best params, in-sample and
	// out-of-sample.
	doc.Tally(plan, folds, []Result{wfResult(0, PhaseTrain, 0, RunFailed, 0, 0)})
	data, _ = json.Marshal(doc.WalkForward.Folds[0])
	if !strings.HasSuffix(string(data), `"best_params":null,"in_sample":null,"out_of_sample":null,"job_id":null}`) {
		t.Fatalf("fold %s", data)
	}
}

// TestRetallyWalkForward: Retally rebuilds a walk-forward's best and folds
// from the results and the folds the document names, as Tally does with
// the plan, keeping the saved total.
func TestRetallyWalkForward(t *testing.T) {
	s := mustSpec(t, Flags{Grid: []string{"fast=0,1"}, WalkForward: "train=2d,test=1d"}, manifest)
	plan := mustPlan(t, s)
	folds, err := s.WalkForward().Folds(week, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	failed := func(fold int, index int64) Result {
		r := wfResult(fold, PhaseTrain, index, RunFailed, 0, 0)
		r.Metrics = nil
		return r
	}
	for _, results := range [][]Result{
		{
			wfResult(0, PhaseTrain, 0, RunPassed, 1, 0.02), wfResult(0, PhaseTrain, 1, RunPassed, 2, 0.04),
			wfResult(0, PhaseTest, 1, RunPassed, 0.5, 0.01),
			wfResult(1, PhaseTrain, 1, RunPassed, 3, 0.10),
		},
		// Every train run of folds 1 and 3 failed: they have no test run,
		// and the total has one run less for each.
		{
			wfResult(0, PhaseTrain, 0, RunPassed, 1, 0.02), failed(1, 0), failed(1, 1),
			wfResult(0, PhaseTrain, 1, RunPassed, 2, 0.04), failed(3, 1), failed(3, 0), wfResult(2, PhaseTrain, 0, RunPassed, 1, 0.02),
		},
		// Every train run of every fold failed: no test run at all.
		{
			failed(0, 0), failed(0, 1), failed(1, 0), failed(1, 1), failed(2, 0), failed(2, 1),
			failed(3, 0), failed(3, 1), failed(4, 0), failed(4, 1),
		},
	} {
		want := &Document{Spec: s.Doc()}
		want.Tally(plan, folds, results)
		b, _ := json.Marshal(want)
		// Saved at any point before (sweep.json lags results.jsonl), the
		// document retallied from every result is the one Tally makes.
		for saved := range len(results) {
			doc := &Document{Spec: s.Doc()}
			doc.Tally(plan, folds, results[:saved])
			doc.Retally(results)
			if a, _ := json.Marshal(doc); string(a) != string(b) {
				t.Fatalf("saved after %d of %d results, retallied\n%s\nwant (Tally)\n%s", saved, len(results), a, b)
			}
		}
	}
}

// TestFinishCountsTheTimeItRan: a resumed sweep's duration is its
// sessions' times added, not the time since it first started.
func TestFinishCountsTheTimeItRan(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	doc := &Document{StartedAt: t0}
	doc.Finish(true, t0.Add(10*time.Second))
	if doc.DurationMS != 10_000 || doc.Status != StatusStopped {
		t.Fatalf("first session: %s, %d ms; want stopped, 10000", doc.Status, doc.DurationMS)
	}
	doc.Resume(t0.Add(time.Hour))
	doc.Finish(false, t0.Add(time.Hour+5*time.Second))
	if doc.DurationMS != 15_000 || !doc.FinishedAt.Equal(t0.Add(time.Hour+5*time.Second)) {
		t.Fatalf("after a resume: %d ms, finished %v; want 15000 (10 s, then 5 s)", doc.DurationMS, doc.FinishedAt)
	}
}
