package components

import (
	"math"
	"strings"

	"stratbench/themes"
)

// Thresholds of a gauge: it turns warn at 75 % and fail at 90 % of its
// limit (docs/workbench.md).
const (
	warnAt = 0.75
	failAt = 0.90
)

// LevelOf returns the level of used against limit. A limit of zero or less
// means "no limit", which is always ok.
func LevelOf(used, limit float64) themes.Level {
	if limit <= 0 {
		return themes.LevelOK
	}
	switch r := used / limit; {
	case r >= failAt:
		return themes.LevelFail
	case r >= warnAt:
		return themes.LevelWarn
	}
	return themes.LevelOK
}

// Gauge draws a bar of w cells: █ up to used, ▒ from used up to peak, ░ for
// the rest, so current and peak read apart without colour.
func Gauge(used, peak, limit float64, w int) string {
	if w <= 0 {
		return ""
	}
	cells := func(v float64) int {
		if limit <= 0 || v <= 0 {
			return 0
		}
		return min(w, int(math.Round(v/limit*float64(w))))
	}
	u, p := cells(used), cells(peak)
	if used > 0 && u == 0 {
		u = 1
	}
	p = max(p, u)
	return strings.Repeat("█", u) + strings.Repeat("▒", p-u) + strings.Repeat("░", w-p)
}
