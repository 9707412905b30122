package app

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

// diffSymbols adds a row for each figure of each symbol whose figures
// differ between a and b, and says how many symbols traded the same.
func diffSymbols(out *strings.Builder, row func(name, x, y string), a, b *job.Report) {
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
	same, shown := 0, 0
	cols := contract.SymbolColumns()
	for _, n := range names {
		fa, okA := a.Symbols[n]
		fb, okB := b.Symbols[n]
		if okA && okB && fa == fb {
			same++
			continue
		}
		if shown == symbolsShown {
			continue
		}
		shown++
		ta, tb := figureTexts(fa, okA), figureTexts(fb, okB)
		for i, c := range cols {
			row(clip(n, 19-len(c))+" "+c, ta[i], tb[i])
		}
	}
	if left := len(names) - same - shown; left > 0 {
		fmt.Fprintf(out, "≠ … and %s more symbols that differ\n", units.Count(left))
	}
	if same > 0 {
		fmt.Fprintf(out, "  %s symbols with the same fills, trades and P&L in both\n", units.Count(same))
	}
}

// figureTexts is a symbol's figures as text, or dashes when it did not trade.
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
