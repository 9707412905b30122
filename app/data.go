package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"stratbench/data"
	"stratbench/internal/termtext"
	"stratbench/internal/units"
)

// DataOptions are the options of `stratbench data info` and `stratbench
// data convert` (README "Bar data").
type DataOptions struct {
	Paths     []string // the PATH arguments: files and folders, as --data takes them
	From, To  string   // the window, both ends inclusive; "" for open
	Timeframe string   // --timeframe: which of freqtrade's timeframes
	Out       string   // convert: the Parquet file to write
	Output    string   // "text" or "json"
	Streams
}

// dataOptions are the data package's options of o, or a usage error.
func (o DataOptions) dataOptions() (data.Options, error) {
	if err := checkOutput(o.Output, "text", "json"); err != nil {
		return data.Options{}, err
	}
	w, err := data.ParseWindow(o.From, o.To)
	if err != nil {
		return data.Options{}, dataError(err)
	}
	budget, err := dataBudget()
	if err != nil {
		return data.Options{}, usage(err)
	}
	spill, err := spillBudget()
	if err != nil {
		return data.Options{}, usage(err)
	}
	return data.Options{Window: w, Budget: budget, SpillBudget: spill, Timeframe: o.Timeframe}, nil
}

// dataError maps an error of package data (or of the market's options)
// to the command's, naming the flags (runFlagNames.input).
func dataError(err error) error { return commandFlags.input(err) }

// DataInfo prints what stratbench reads of the data at o.Paths: per symbol
// its bars, first and last time, interval and gaps, formats and size; per
// file its format and layout; and the data's fingerprint.
func DataInfo(ctx context.Context, o DataOptions) error {
	opts, err := o.dataOptions()
	if err != nil {
		return err
	}
	signals := listenSignals()
	defer signals.close()
	var sum *data.Summary
	err = signals.setup(ctx, func(ctx context.Context) error {
		var err error
		sum, err = data.Describe(ctx, o.Paths, opts)
		return err
	})
	if err != nil {
		return dataError(err)
	}
	if o.Output == "json" {
		return writeJSON(o.Stdout, sum)
	}
	_, err = io.WriteString(o.Stdout, termtext.Text(summaryText(sum)))
	return err
}

// summaryText is a summary as text: the data, its symbols, its files.
func summaryText(s *data.Summary) string {
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

// DataConvert writes the bars of o.Paths inside the window to o.Out as
// one sorted Parquet file (data.Convert), and says what it wrote.
func DataConvert(ctx context.Context, o DataOptions) error {
	opts, err := o.dataOptions()
	if err != nil {
		return err
	}
	if o.Out == "" {
		return usage(errors.New("--out FILE.parquet: the file to write is missing"))
	}
	signals := listenSignals()
	defer signals.close()
	var res *data.Converted
	err = signals.setup(ctx, func(ctx context.Context) error {
		var err error
		res, err = data.Convert(ctx, o.Paths, opts, o.Out)
		return err
	})
	if err != nil {
		return dataError(err)
	}
	if o.Output == "json" {
		return writeJSON(o.Stdout, res)
	}
	_, err = fmt.Fprintf(o.Stdout, "wrote %s: %s bars of %s (%s to %s), %s row groups, %s\n",
		termtext.Line(res.Out), units.Count(res.Bars), symbolList(res.Symbols), stamp(res.From), stamp(res.To),
		units.Count(res.RowGroups), units.Bytes(res.Bytes))
	return err
}
