package words

import (
	"reflect"
	"testing"
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
