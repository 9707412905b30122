package sweep

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
)

// TestPlannedTellsThePlan: Planned (the view's) answers, for every
// combination of the grid, what the sweep's Plan runs (with a
// constraint, a sample and both), for params as the grid holds them and
// as a results line reads them back; at any size of grid.
func TestPlannedTellsThePlan(t *testing.T) {
	ctx := context.Background()
	ten, five := int64(10), int64(5)
	for _, f := range []Flags{
		{Grid: []string{"fast=2:5:1", "slow=10:40:10", "stop=0.5,1.5"}},
		{Grid: []string{"fast=2:5:1", "slow=10:40:10", "stop=0.5,1.5"}, Constraint: "fast * 10 <= slow"},
		{Grid: []string{"fast=2:5:1", "slow=10:40:10", "stop=0.5,1.5"}, Random: &ten, Seed: 7},
		{Grid: []string{"fast=2:5:1", "slow=10:40:10", "stop=0.5,1.5"}, Constraint: "fast * 10 <= slow", Random: &five},
	} {
		spec, err := ParseSpec(f, map[string]any{"fast": int64(0), "slow": int64(0), "stop": 0.0})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := spec.Plan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		in := map[int64]bool{}
		for c := range plan.All(context.Background()) {
			in[c.Index] = true
		}
		has := Planned(spec, plan)
		for i := range spec.Size() {
			c := spec.At(i)
			line, err := json.Marshal(Result{Index: i, Params: c.Params, Status: RunPassed})
			if err != nil {
				t.Fatal(err)
			}
			var read Result
			if err := json.Unmarshal(line, &read); err != nil {
				t.Fatal(err)
			}
			if has(c.Params) != in[i] || has(read.Params) != in[i] {
				t.Errorf("%+v: #%d (%s): planned %v (read back %v), the plan runs it: %v", f, i, c.Params, has(c.Params), has(read.Params), in[i])
			}
		}
	}
	// A grid of 1.1 million combinations, sampled and constrained: the view
	// is told its plan too (no bitmap of the grid: Plan.Has).
	for _, f := range []Flags{
		{Grid: []string{"a=0:1100:1", "b=0:1000:1"}, Random: &five},
		{Grid: []string{"a=0:1100:1", "b=0:1000:1"}, Constraint: "a == 1100 && b % 250 == 0"},
	} {
		spec, err := ParseSpec(f, map[string]any{"a": int64(0), "b": int64(0)})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := spec.Plan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		has := Planned(spec, plan)
		var in []int64
		for c := range plan.All(ctx) {
			in = append(in, c.Index)
			if !has(c.Params) {
				t.Errorf("%+v: #%d (%s) is planned, the view is told it is not", f, c.Index, c.Params)
			}
		}
		if len(in) != 5 {
			t.Fatalf("%+v: plan %v", f, in)
		}
		for _, i := range []int64{0, 1, in[0] + 1, spec.Size() - 2} {
			if c := spec.At(i); !slices.Contains(in, i) && has(c.Params) {
				t.Errorf("%+v: #%d (%s) is not planned, the view is told it is", f, i, c.Params)
			}
		}
	}
}
