package components

import (
	"testing"

	"stratbench/themes"
)

// TestLevelOf (moved here from the themes with the thresholds).
func TestLevelOf(t *testing.T) {
	for _, tc := range []struct {
		used, limit float64
		want        themes.Level
	}{
		{0, 100, themes.LevelOK},
		{74.9, 100, themes.LevelOK},
		{75, 100, themes.LevelWarn},
		{89.9, 100, themes.LevelWarn},
		{90, 100, themes.LevelFail},
		{250, 100, themes.LevelFail},
		{1 << 30, 2 << 30, themes.LevelOK},           // 1 GiB of 2 GiB
		{1.6 * (1 << 30), 2 << 30, themes.LevelWarn}, // 80 %
		{29, 32, themes.LevelFail},                   // processes: 90.6 %
		{5, 0, themes.LevelOK},                       // no limit
	} {
		if got := LevelOf(tc.used, tc.limit); got != tc.want {
			t.Errorf("LevelOf(%v, %v) = %v, want %v", tc.used, tc.limit, got, tc.want)
		}
	}
}
