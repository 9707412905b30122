package sweep

import "testing"

func TestEfficiencyWhy(t *testing.T) {
	job := "20261201-120000.000-a1b2"
	in := func(r float64) *InSample { return &InSample{Metric: "sharpe", Value: 1, Return: r} }
	oos := []byte(`{"total_return":0.01}`)
	for _, tc := range []struct {
		folds []FoldResult
		done  bool
		want  string
	}{
		{nil, true, "no fold has run yet"},
		{[]FoldResult{{InSample: in(0.01), OutOfSample: oos}, {}}, true, "no train run of fold 1 passed, so it has no in-sample return and no test run"},
		{[]FoldResult{{}}, false, "fold 0 has no passed train run yet"},
		{[]FoldResult{{InSample: in(0), OutOfSample: oos}}, true, "fold 0's in-sample return is 0.00 %, not above 0"},
		{[]FoldResult{{InSample: in(0.01), JobID: &job}}, true, "fold 0's test run (job " + job + ") did not pass"},
		{[]FoldResult{{InSample: in(0.01)}}, false, "fold 0's test run has not run yet"},
	} {
		if got := (&WalkForwardResult{Folds: tc.folds}).EfficiencyWhy(tc.done); got != tc.want {
			t.Errorf("EfficiencyWhy = %q, want %q", got, tc.want)
		}
	}
}
