package present

import (
	"fmt"
	"slices"
	"strings"

	"stratbench/contract"
	"stratbench/internal/units"
	"stratbench/job"
)

// symbolsShown is how many symbols the text report and the diff list; the
// report's JSON has every traded one.
const symbolsShown = 20

// writeSymbols writes each traded symbol's figures (the report's
// "symbols"), a row each, when the report has them.
func writeSymbols(b *strings.Builder, rep *job.Report) {
	if len(rep.Symbols) == 0 {
		return
	}
	names, more := contract.ShownSymbols(rep.Symbols, symbolsShown)
	width := len("symbol")
	for _, n := range names {
		width = max(width, len([]rune(n)))
	}
	width = min(width, 24)
	rows, widths := contract.SymbolTable(rep.Symbols, names)
	fmt.Fprintf(b, "\n%-*s", width, "symbol")
	for i, c := range contract.SymbolColumns() {
		fmt.Fprintf(b, "  %*s", widths[i], c)
	}
	b.WriteString("\n")
	for k, n := range names {
		fmt.Fprintf(b, "%-*s", width, clip(n, width))
		for i, v := range rows[k] {
			fmt.Fprintf(b, "  %*s", widths[i], v)
		}
		b.WriteString("\n")
	}
	if more > 0 {
		fmt.Fprintf(b, "… and %s more symbols (those with the largest P&L are shown; the JSON report has all)\n", units.Count(more))
	}
}

// symbolRows adds to d a row for each figure of each symbol whose figures
// differ between a and b (Field "symbols.NAME.FIGURE"), and counts in
// d.SameSymbols the symbols with the same figures in both.
func symbolRows(d *jobDiff, a, b *job.Report) {
	if a.Symbols == nil && b.Symbols == nil {
		return
	}
	var names []string
	for n := range a.Symbols {
		names = append(names, n)
	}
	for n := range b.Symbols {
		if _, ok := a.Symbols[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	cols := contract.SymbolColumns()
	for _, n := range names {
		fa, okA := a.Symbols[n]
		fb, okB := b.Symbols[n]
		if okA && okB && fa == fb {
			d.SameSymbols++
			continue
		}
		ta, tb := figureTexts(fa, okA), figureTexts(fb, okB)
		va, vb := figureValues(fa, okA), figureValues(fb, okB)
		for i, c := range cols {
			d.Rows = append(d.Rows, diffRow{Field: "symbols." + n + "." + c, Kind: DiffSymbol,
				A: va[i], B: vb[i], Same: va[i] == vb[i], label: n + " " + c, aText: ta[i], bText: tb[i],
				symbol: n})
		}
	}
}

// figureValues are f's figures in SymbolColumns' order as the report
// holds them, or nils for a symbol the report lacks.
func figureValues(f contract.SymbolFigures, ok bool) []any {
	if !ok {
		return make([]any, len(contract.SymbolColumns()))
	}
	return []any{f.Fills, f.Trades, f.PnL, f.RealizedPnL, f.Fees, f.Exposure, f.Position}
}

func figureTexts(f contract.SymbolFigures, ok bool) []string {
	if !ok {
		out := make([]string, len(contract.SymbolColumns()))
		for i := range out {
			out[i] = "-"
		}
		return out
	}
	return f.Texts()
}
