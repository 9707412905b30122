package present

import (
	"fmt"
	"stratbench/data"
	"stratbench/internal/termtext"
	"stratbench/internal/units"
	"strings"
	"time"
	"unicode/utf8"
)

// DataSummaryText is a summary as text: the data, its symbols, its files.
func DataSummaryText(s *data.Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "data         %s\n", s.Source)
	fmt.Fprintf(&b, "window       %s\n", s.Window)
	fmt.Fprintf(&b, "bars         %s, %s to %s\n", units.Count(s.Bars), stamp(s.From), stamp(s.To))
	fmt.Fprintf(&b, "fingerprint  %s\n\n", s.Fingerprint)
	rows := [][]string{{"SYMBOL", "BARS", "FIRST", "LAST", "INTERVAL", "GAPS", "LARGEST GAP", "FORMAT", "SIZE"}}
	for _, sym := range s.Symbols {
		rows = append(rows, []string{sym.Symbol, units.Count(sym.Bars), stamp(sym.From), stamp(sym.To),
			secondsText(sym.IntervalS), units.Count(sym.Gaps), secondsText(sym.LargestGapS), strings.Join(sym.Formats, ","), units.Bytes(sym.Bytes)})
	}
	b.WriteString(table(rows, "lrllrrrlr"))
	b.WriteString("\n")
	rows = [][]string{{"FILE", "FORMAT", "LAYOUT", "SIZE", "SYMBOLS"}}
	for _, f := range s.Files {
		layout := f.Layout
		if layout == "" {
			layout = "-"
		}
		rows = append(rows, []string{f.Path, f.Format, layout, units.Bytes(f.Bytes), symbolList(f.Symbols)})
	}
	b.WriteString(table(rows, "lllrl"))
	return b.String()
}

// table lays rows out in columns two spaces apart, each aligned as align
// says ('l' left, 'r' right); the last column is not padded.
func table(rows [][]string, align string) string {
	widths := make([]int, len(align))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			switch {
			case i == len(r)-1 && align[i] == 'l':
				b.WriteString(c)
			case align[i] == 'r':
				b.WriteString(padLeft(c, widths[i]))
			default:
				b.WriteString(padRight(c, widths[i]))
			}
			if i < len(r)-1 {
				b.WriteString("  ")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// stamp is a bar's time in UTC, to the second (with a fraction when it
// has one).
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05.999999999")
}

// secondsText is a time between bars.
func secondsText(s float64) string {
	if s == 0 {
		return "-"
	}
	return units.Duration(time.Duration(s * float64(time.Second)))
}

// symbolList lists a file's symbols, at most five.
func symbolList(syms []string) string {
	if len(syms) > 5 {
		return strings.Join(syms[:5], ",") + fmt.Sprintf(" and %d more", len(syms)-5)
	}
	return strings.Join(syms, ",")
}

// ConvertedText says what `data convert` wrote, on one line.
func ConvertedText(res *data.Converted) string {
	return fmt.Sprintf("wrote %s: %s bars of %s (%s to %s), %s row groups, %s\n",
		termtext.Line(res.Out), units.Count(res.Bars), symbolList(res.Symbols), stamp(res.From), stamp(res.To),
		units.Count(res.RowGroups), units.Bytes(res.Bytes))
}
