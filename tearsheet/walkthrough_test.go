package tearsheet

import (
	"testing"

	"stratbench/sweep"
)

// TestWalkForwardSaysWhyNoEfficiency: a walk-forward whose efficiency is
// empty says why, the first fold that lacks what it needs; it showed "–".
func TestWalkForwardSaysWhyNoEfficiency(t *testing.T) {
	wf := &sweep.WalkForwardResult{Folds: []sweep.FoldResult{
		{InSample: &sweep.InSample{Metric: "sharpe", Value: 2, Return: 0.01}, OutOfSample: []byte(`{"total_return":0.002}`)},
		{InSample: &sweep.InSample{Metric: "sharpe", Value: -1, Return: -0.0052}, OutOfSample: []byte(`{"total_return":0.01}`)},
	}}
	v := walkForward(wf, true)
	if v.Efficiency != "–" || v.EfficiencyWhy != "fold 1's in-sample return is -0.52 %, not above 0" {
		t.Errorf("efficiency %q, why %q", v.Efficiency, v.EfficiencyWhy)
	}
	e := 0.8
	wf.Efficiency = &e
	if v := walkForward(wf, true); v.EfficiencyWhy != "" {
		t.Errorf("an efficiency with a why: %q", v.EfficiencyWhy)
	}
}
