package job

import (
	"slices"
	"testing"
)

// TestFilter: the default listing shows the jobs of their own and counts
// the sweep runs it hides that match; --sweep ID shows that sweep's runs,
// --all every job; status and strategy filter all of them.
func TestFilter(t *testing.T) {
	mk := func(id string, st Status, path, sweep string) *Report {
		r := &Report{JobID: id, Status: st}
		r.Strategy.Path = path
		if sweep != "" {
			r.Sweep = &SweepTag{ID: sweep}
		}
		return r
	}
	all := []*Report{
		mk("a", StatusPassed, "/x/rsi.py", ""), mk("b", StatusFailed, "/x/rsi.py", "sw-1"),
		mk("c", StatusPassed, "/x/sma.py", "sw-2"), mk("d", StatusFailed, "/x/sma.py", ""),
	}
	ids := func(rs []*Report) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.JobID)
		}
		return out
	}
	for _, tc := range []struct {
		f      Filter
		want   []string
		hidden int
	}{
		{Filter{}, []string{"a", "d"}, 2},
		{Filter{Status: StatusFailed}, []string{"d"}, 1},
		{Filter{Strategy: "rsi"}, []string{"a"}, 1},
		{Filter{AllSweeps: true}, []string{"a", "b", "c", "d"}, 0},
		{Filter{SweepID: "sw-2"}, []string{"c"}, 0},
		{Filter{SweepID: "sw-2", Status: StatusFailed}, nil, 0},
	} {
		shown, hidden := tc.f.Apply(all)
		if !slices.Equal(ids(shown), tc.want) || hidden != tc.hidden {
			t.Errorf("%+v: %v, %d hidden; want %v, %d", tc.f, ids(shown), hidden, tc.want, tc.hidden)
		}
	}
	if got := SweepIDs(append(all, mk("e", StatusPassed, "", "sw-1"))); !slices.Equal(got, []string{"sw-1", "sw-2"}) {
		t.Errorf("SweepIDs: %v", got)
	}
}
