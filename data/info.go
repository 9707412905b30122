package data

import (
	"context"
	"os"
	"slices"
	"time"
)

// Summary describes bar data: what `stratbench data info` prints.
type Summary struct {
	Source  string          `json:"source"` // the paths, as given, joined by ", "
	Window  string          `json:"window"` // FROM..TO, "-" for an open end
	Bars    int64           `json:"bars"`   // in the window
	From    time.Time       `json:"from"`   // the first bar's time
	To      time.Time       `json:"to"`     // the last bar's
	Symbols []SymbolSummary `json:"symbols"`
	Files   []FileSummary   `json:"files"`
	// Fingerprint is the data's digest, which a run on the same paths and
	// window takes into its fingerprint (and a sweep records as its data's
	// fingerprint): Set.Digest.
	Fingerprint string `json:"fingerprint"`
}

// SymbolSummary describes one symbol's bars in the window.
type SymbolSummary struct {
	Symbol string    `json:"symbol"`
	Bars   int64     `json:"bars"`
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	// IntervalS is the most common time between two consecutive bars, in
	// seconds (0 with one bar); Gaps counts the times between two bars
	// that are longer, LargestGapS the longest (nights and weekends of a
	// market's hours count too).
	IntervalS   float64  `json:"interval_s"`
	Gaps        int64    `json:"gaps"`
	LargestGapS float64  `json:"largest_gap_s"`
	Formats     []string `json:"formats"` // of the files that hold its bars
	Bytes       int64    `json:"bytes"`   // the size of those files (a file of several symbols counts for each)
}

// FileSummary describes one data file.
type FileSummary struct {
	Path    string   `json:"path"`
	Format  string   `json:"format"`           // csv, jsonl, parquet, feather, freqtrade-json
	Layout  string   `json:"layout,omitempty"` // hive, freqtrade, nautilus: what gave its symbol or time column
	Bytes   int64    `json:"bytes"`
	Symbols []string `json:"symbols"`
}

// String names a format for people.
func (f fileFormat) String() string {
	return [...]string{formatCSV: "csv", formatJSONL: "jsonl", formatParquet: "parquet", formatFeather: "feather",
		formatFTJSON: "freqtrade-json"}[f]
}

// layout names what gave src its symbol or time column, "" for none.
func (src *source) layout() string {
	switch {
	case src.pq != nil && src.pq.nautilus != nil:
		return "nautilus"
	case src.entry.partitioned:
		return "hive"
	case src.format == formatFTJSON || src.timeColumn == "date":
		return "freqtrade"
	}
	return ""
}

// maxIntervals bounds the distinct times between bars a symbol's summary
// counts to find the most common: data whose bars are spaced in more ways
// (ticks at random times) gets the most common of the first ones seen.
const maxIntervals = 4096

// symbolStats gathers one symbol's summary as its bars stream.
type symbolStats struct {
	bars        int64
	first, last int64
	gaps        map[int64]int64 // time between two bars → how often
	spacings    int64           // times between two bars, all counted
	largest     int64
}

// Describe reads the bars of paths inside opts.Window, as a run would, and
// summarises them by symbol and by file. Its errors are Open's and
// Stream.Fill's.
func Describe(ctx context.Context, paths []string, opts Options) (*Summary, error) {
	s, err := Open(ctx, paths, opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	stats := make([]symbolStats, len(s.symbols))
	st, err := s.Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	for pos := 0; pos < st.Events(); {
		bars, first, err := st.Fill(pos + chunkBars)
		if err != nil {
			return nil, err
		}
		for i := pos - first; i < bars.Len(); i++ {
			ss := &stats[bars.Symbol[i]]
			t := bars.Time[i]
			if ss.bars > 0 {
				d := t - ss.last
				if ss.gaps == nil {
					ss.gaps = map[int64]int64{}
				}
				if _, ok := ss.gaps[d]; ok || len(ss.gaps) < maxIntervals {
					ss.gaps[d]++
				}
				ss.spacings++
				ss.largest = max(ss.largest, d)
			} else {
				ss.first = t
			}
			ss.last = t
			ss.bars++
		}
		pos = first + bars.Len()
		st.Release(pos)
	}
	fp, err := s.Digest(ctx)
	if err != nil {
		return nil, err
	}
	sum := &Summary{Source: s.info.Source, Window: s.window.String(), Bars: s.info.Events,
		From: s.info.From, To: s.info.To, Fingerprint: fp}
	files := make([][]*source, len(s.symbols)) // by symbol
	for _, src := range s.srcs {
		fs := FileSummary{Path: src.path, Format: src.format.String(), Layout: src.layout(), Bytes: src.size, Symbols: []string{}}
		for _, l := range src.toSet {
			fs.Symbols = append(fs.Symbols, s.symbols[l])
			files[l] = append(files[l], src)
		}
		slices.Sort(fs.Symbols)
		sum.Files = append(sum.Files, fs)
	}
	for k, name := range s.symbols {
		ss := &stats[k]
		sym := SymbolSummary{Symbol: name, Bars: ss.bars, Formats: []string{}}
		if ss.bars > 0 {
			sym.From, sym.To = time.Unix(0, ss.first).UTC(), time.Unix(0, ss.last).UTC()
		}
		var interval, most int64
		for d, n := range ss.gaps {
			if n > most || n == most && d < interval {
				interval, most = d, n
			}
		}
		sym.Gaps = ss.spacings
		for d, n := range ss.gaps {
			if d <= interval {
				sym.Gaps -= n
			}
		}
		sym.IntervalS, sym.LargestGapS = seconds(interval), seconds(ss.largest)
		for _, src := range files[k] {
			if f := src.format.String(); !slices.Contains(sym.Formats, f) {
				sym.Formats = append(sym.Formats, f)
			}
			sym.Bytes += src.size
		}
		sum.Symbols = append(sum.Symbols, sym)
	}
	return sum, nil
}

func seconds(ns int64) float64 { return float64(ns) / 1e9 }

// sameFile reports whether path names one of the set's files.
func (s *Set) sameFile(path string) (string, bool) {
	info, err := os.Stat(path)
	if err != nil {
		return "", false
	}
	for _, src := range s.srcs {
		if held, err := src.fh.Stat(); err == nil && os.SameFile(info, held) {
			return src.path, true
		}
	}
	return "", false
}
