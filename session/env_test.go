package session

import "testing"

func TestDataBudget(t *testing.T) {
	for v, want := range map[string]int64{"": 0, "0": -1, "256": 256 << 20} {
		t.Setenv("STRATBENCH_DATA_BUDGET", v)
		if got, err := DataBudget(); err != nil || got != want {
			t.Errorf("STRATBENCH_DATA_BUDGET=%q: %d, %v; want %d", v, got, err, want)
		}
	}
	for _, v := range []string{"-1", "1.5", "lots"} {
		t.Setenv("STRATBENCH_DATA_BUDGET", v)
		if _, err := DataBudget(); err == nil {
			t.Errorf("STRATBENCH_DATA_BUDGET=%q accepted", v)
		}
	}
}
