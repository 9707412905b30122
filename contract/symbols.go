package contract

import (
	"math"
	"slices"
	"strings"

	"stratbench/internal/units"
)

// SymbolFigures are one symbol's share of a replay, the report's "symbols"
// block (docs/report.md): what its fills did to the one portfolio. The
// pnl of every symbol adds up to final_equity - start_equity.
type SymbolFigures struct {
	Fills int `json:"fills"` // filled orders of the symbol
	// Trades are the symbol's closed round trips (metrics.trades counts
	// those of every symbol).
	Trades int `json:"trades"`
	// PnL is what the symbol made: its sells less its buys less its fees,
	// plus its position at its last close.
	PnL float64 `json:"pnl"`
	// RealizedPnL is the net P&L of its closed trades.
	RealizedPnL float64 `json:"realized_pnl"`
	Fees        float64 `json:"fees"`
	// Exposure is the share of the equity curve's timestamps that ended
	// with a position in the symbol.
	Exposure float64 `json:"exposure"`
	Position float64 `json:"position"` // at the end
}

// SymbolColumns names the figures in the order every printer shows them:
// the report's keys.
func SymbolColumns() []string {
	return []string{"fills", "trades", "pnl", "realized_pnl", "fees", "exposure", "position"}
}

// Texts formats the figures for people, in SymbolColumns' order and the
// units the metrics use.
func (f SymbolFigures) Texts() []string {
	return []string{units.Count(f.Fills), units.Count(f.Trades), units.Money(f.PnL), units.Money(f.RealizedPnL),
		units.Money(f.Fees), units.Percent(f.Exposure), strconvFloat(f.Position)}
}

// SymbolTable formats the figures of names as rows of cells under
// SymbolColumns, each column as wide as its widest cell (header
// included), for printers that align them: widths[i] is column i's.
func SymbolTable(figures map[string]SymbolFigures, names []string) (rows [][]string, widths []int) {
	cols := SymbolColumns()
	widths = make([]int, len(cols))
	for i, c := range cols {
		widths[i] = len(c)
	}
	for _, n := range names {
		row := figures[n].Texts()
		for i, v := range row {
			widths[i] = max(widths[i], len([]rune(v)))
		}
		rows = append(rows, row)
	}
	return rows, widths
}

// ShownSymbols picks the symbols a printer lists: all of them, by name,
// when there are at most limit; else the limit of them with the largest
// P&L either way, by name, and how many are left out.
func ShownSymbols(figures map[string]SymbolFigures, limit int) (names []string, more int) {
	names = make([]string, 0, len(figures))
	for name := range figures {
		names = append(names, name)
	}
	if len(names) > limit {
		slices.SortFunc(names, func(a, b string) int {
			pa, pb := math.Abs(figures[a].PnL), math.Abs(figures[b].PnL)
			switch {
			case pa > pb:
				return -1
			case pa < pb:
				return 1
			}
			return strings.Compare(a, b)
		})
		more, names = len(names)-limit, names[:limit]
	}
	slices.Sort(names)
	return names, more
}
