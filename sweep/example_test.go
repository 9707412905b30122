package sweep_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"stratbench/sweep"
)

// The flow of a sweep as an executor drives it: check the spec against the
// MANIFEST before any run, plan, create the sweep folder, run what has no
// result, append each result as it finishes, and keep the document up to
// date. Here a made-up "run" stands in for the job.
func Example() {
	home, _ := os.MkdirTemp("", "sweep-example")
	defer os.RemoveAll(home)
	declared := map[string]any{"fast": int64(10), "slow": int64(50)} // the MANIFEST's defaults

	spec, err := sweep.ParseSpec(sweep.Flags{
		Grid:       []string{"fast=5:15:5", "slow=10,20"},
		Constraint: "fast < slow",
		Metric:     "total_return",
	}, declared)
	if err != nil {
		fmt.Println(err) // a *sweep.UsageError: exit 2
		return
	}
	plan, err := spec.Plan(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	store, _ := sweep.OpenStore(home)
	doc := &sweep.Document{Status: sweep.StatusRunning, Spec: spec.Doc(), Executor: sweep.Executor{Kind: sweep.ExecutorLocal},
		StartedAt: time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)}
	results, err := store.Create(doc)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer results.Close()
	// A new sweep has no results; a resume's OpenResults reads back what
	// its sweep has, and runs only the rest (ReadBack.Done).
	var all []sweep.Result
	for c := range plan.All(context.Background()) {
		// The run: spec.Args(c) are its --param arguments.
		fast, _ := c.Params.Get("fast")
		r := sweep.Result{Index: c.Index, Params: c.Params, JobID: fmt.Sprint("job-", c.Index), Status: sweep.RunPassed,
			Metrics: json.RawMessage(fmt.Sprintf(`{"total_return": %v}`, float64(fast.(int64))/100))}
		fmt.Println("run", c.Index, spec.Args(c))
		if err := results.Append(r); err != nil {
			fmt.Println(err)
			return
		}
		all = append(all, r)
	}
	doc.Tally(plan, nil, all)
	doc.Finish(false, doc.StartedAt.Add(time.Second))
	store.Save(doc)
	fmt.Printf("%s: %d of %d passed, best index %d (%v)\n", doc.Status, doc.Counts.Passed, doc.Counts.Total, doc.Best.Index, doc.Best.Params)
	// Output:
	// run 0 [fast=5 slow=10]
	// run 1 [fast=5 slow=20]
	// run 3 [fast=10 slow=20]
	// run 5 [fast=15 slow=20]
	// passed: 4 of 4 passed, best index 5 (fast=15, slow=20)
}
