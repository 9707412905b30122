package words

import (
	"reflect"
	"testing"

	"stratbench/sweep"
)

func TestStrategyNames(t *testing.T) {
	for _, tc := range []struct {
		paths, want []string
	}{
		{[]string{"/a/s.py", "/a/s.py", "/b/t.py"}, []string{"s.py", "s.py", "t.py"}},
		{[]string{"/r/a/strategy.py", "/r/b/strategy.py", "/r/a/strategy.py"}, []string{"a/strategy.py", "b/strategy.py", "a/strategy.py"}},
		{[]string{"/x/a/strategy.py", "/y/a/strategy.py"}, []string{"x/a/strategy.py", "y/a/strategy.py"}},
		{[]string{"/s.py", "/a/s.py"}, []string{"s.py", "a/s.py"}},
	} {
		if got := StrategyNames(tc.paths); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("StrategyNames(%q) = %q, want %q", tc.paths, got, tc.want)
		}
	}
}

func TestParamOrder(t *testing.T) {
	params := []map[string]any{
		{"alloc": 0.4, "period": 14, "upper": 70},
		{"alloc": 0.4, "period": 21, "upper": 70, "extra": true},
		nil,
	}
	if got, want := ParamOrder(params), []string{"extra", "period", "alloc", "upper"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ParamOrder = %q, want %q", got, want)
	}
	if got, want := Params(params[1], []string{"period", "extra"}), "period=21 extra=true alloc=0.4 upper=70"; got != want {
		t.Errorf("Params = %q, want %q", got, want)
	}
}

func TestEfficiencyGap(t *testing.T) {
	job := "20261201-120000.000-a1b2"
	in := func(r float64) *sweep.InSample { return &sweep.InSample{Metric: "sharpe", Value: 1, Return: r} }
	oos := []byte(`{"total_return":0.01}`)
	for _, tc := range []struct {
		folds []sweep.FoldResult
		done  bool
		want  string
	}{
		{nil, true, "no fold has run yet"},
		{[]sweep.FoldResult{{InSample: in(0.01), OutOfSample: oos}, {}}, true, "no train run of fold 1 passed, so it has no in-sample return and no test run"},
		{[]sweep.FoldResult{{}}, false, "fold 0 has no passed train run yet"},
		{[]sweep.FoldResult{{InSample: in(0), OutOfSample: oos}}, true, "fold 0's in-sample return is 0.00 %, not above 0"},
		{[]sweep.FoldResult{{InSample: in(0.01), JobID: &job}}, true, "fold 0's test run (job " + job + ") did not pass"},
		{[]sweep.FoldResult{{InSample: in(0.01)}}, false, "fold 0's test run has not run yet"},
	} {
		if got := EfficiencyGap(&sweep.WalkForwardResult{Folds: tc.folds}, tc.done); got != tc.want {
			t.Errorf("EfficiencyGap = %q, want %q", got, tc.want)
		}
	}
}
