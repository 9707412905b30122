package present

import (
	"fmt"
	"strings"
	"testing"

	"stratbench/contract"
	"stratbench/internal/fixtures"
	"stratbench/job"
)

func withSymbols(rep *job.Report, figures map[string]contract.SymbolFigures) *job.Report {
	r := *rep
	r.Symbols = figures
	return &r
}

// TestReportTextSymbols: the text report lists each traded symbol's
// figures after the metrics, the 20 with the largest P&L when more traded
// (saying how many it left out); a report without them (older versions)
// has no table.
func TestReportTextSymbols(t *testing.T) {
	passed := fixtures.Load(t, "passed").Report
	if strings.Contains(ReportText(passed), "realized_pnl") {
		t.Fatal("a report without symbols has a symbols table")
	}
	rep := withSymbols(passed, map[string]contract.SymbolFigures{
		"SYNB": {Fills: 4, Trades: 2, PnL: -12.5, RealizedPnL: -12.5, Fees: 0.25, Exposure: 0.1, Position: 0},
		"SYNA": {Fills: 3, Trades: 1, PnL: 1234.5, RealizedPnL: 1000, Fees: 0.5, Exposure: 0.25, Position: 10},
	})
	text := ReportText(rep)
	want := "symbol  fills  trades       pnl  realized_pnl  fees  exposure  position\n" +
		"SYNA        3       1  1,234.50      1,000.00  0.50   25.00 %        10\n" +
		"SYNB        4       2    -12.50        -12.50  0.25   10.00 %         0\n"
	if !strings.Contains(text, want) {
		t.Fatalf("no symbols table\n%s\nin\n%s", want, text)
	}
	many := map[string]contract.SymbolFigures{}
	for i := range 25 {
		many[fmt.Sprintf("S%02d", i)] = contract.SymbolFigures{Fills: 1, PnL: float64(i)}
	}
	text = ReportText(withSymbols(passed, many))
	if !strings.Contains(text, "\nS05 ") || strings.Contains(text, "\nS04 ") ||
		!strings.Contains(text, "… and 5 more symbols (those with the largest P&L are shown; the JSON report has all)\n") {
		t.Fatalf("25 symbols: want S05 to S24 and a line about 5 more:\n%s", text)
	}
}

// TestDiffTextSymbols: status --diff shows each figure of the symbols
// whose figures differ, and counts those that traded the same.
func TestDiffTextSymbols(t *testing.T) {
	passed := fixtures.Load(t, "passed").Report
	same := contract.SymbolFigures{Fills: 2, Trades: 1, PnL: 5}
	a := withSymbols(passed, map[string]contract.SymbolFigures{"SYNA": same, "SYNB": {Fills: 2, Trades: 1, PnL: 7}})
	b := withSymbols(passed, map[string]contract.SymbolFigures{"SYNA": same, "SYNB": {Fills: 4, Trades: 2, PnL: -3}, "SYNC": {Fills: 1}})
	text := diffText(a, b)
	for _, row := range []string{"≠ SYNB fills ", "≠ SYNB pnl ", "≠ SYNC fills ", "  1 symbols with the same fills, trades and P&L in both\n"} {
		if !strings.Contains(text, row) {
			t.Errorf("no %q in:\n%s", row, text)
		}
	}
	if strings.Contains(text, " SYNA fills") {
		t.Errorf("a symbol that traded the same has rows:\n%s", text)
	}
	if text := diffText(passed, passed); strings.Contains(text, "symbols with the same") || strings.Contains(text, "symbols that differ") {
		t.Errorf("reports without symbols: a symbols line in\n%s", text)
	}
}
