package workbench

import (
	"strings"
	"testing"

	"stratbench/contract"
	"stratbench/job"
	"stratbench/themes"
)

// TestResultsShowSymbols: the results pane lists each traded symbol's
// figures (the report's "symbols") after the metrics; none without them.
func TestResultsShowSymbols(t *testing.T) {
	p := newResultsPane()
	p.w, p.h = 120, 40
	rep := &job.Report{Status: job.StatusPassed, Metrics: &contract.Metrics{}}
	p.setReport(rep)
	if text := strings.Join(p.lines(themes.Plain()), "\n"); strings.Contains(text, "realized_pnl") {
		t.Fatalf("a report without symbols shows a symbols table:\n%s", text)
	}
	rep.Symbols = map[string]contract.SymbolFigures{
		"ACME": {Fills: 38, Trades: 19, PnL: 428.51, RealizedPnL: 428.51, Exposure: 0.3393},
		"BOLT": {Fills: 2, PnL: -1.5, Position: 7},
	}
	p.setReport(rep)
	text := strings.Join(p.lines(themes.Plain()), "\n")
	for _, want := range []string{"realized_pnl", "ACME       38      19  428.51        428.51", "BOLT        2       0   -1.50          0.00"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
}
