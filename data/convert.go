package data

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"stratbench/internal/atomicfile"
)

// ConvertRowGroup is the number of rows of a row group Convert writes:
// about 3.5 MiB of bars before compression, small enough that --from and
// --to skip most of a large file by its statistics (45 days of one
// symbol's minute bars, a day and a half of 30 symbols'), large enough
// that the footer stays small (150 row groups for 10 million bars).
const ConvertRowGroup = 1 << 16

// convertedBar is a row of a converted file.
type convertedBar struct {
	Timestamp int64   `parquet:"timestamp,timestamp(nanosecond:utc)"`
	Symbol    string  `parquet:"symbol,dict"`
	Open      float64 `parquet:"open"`
	High      float64 `parquet:"high"`
	Low       float64 `parquet:"low"`
	Close     float64 `parquet:"close"`
	Volume    float64 `parquet:"volume"`
}

// Converted says what Convert wrote.
type Converted struct {
	Out       string    `json:"out"`
	Bars      int64     `json:"bars"`
	Symbols   []string  `json:"symbols"`
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
	RowGroups int       `json:"row_groups"`
	Bytes     int64     `json:"bytes"`
	// Fingerprint is the input data's digest (Summary.Fingerprint); the
	// converted file's own differs, its bytes being others.
	Fingerprint string `json:"fingerprint"`
}

// OutError is a problem with the file Convert is asked to write (its
// name, or it is one of the inputs), not with the data: bad usage.
type OutError struct {
	Path string
	Msg  string
}

func (e *OutError) Error() string { return "write " + e.Path + ": " + e.Msg }

// Convert reads the bars of paths inside opts.Window, as a run would, and
// writes them to out as one Parquet file in replay order (by time, then
// symbol): columns timestamp (TIMESTAMP(NANOS), UTC), symbol (a string,
// dictionary-encoded), open, high, low, close and volume (DOUBLE), zstd,
// row groups of ConvertRowGroup rows with their statistics, so that a run
// with --from and --to reads only the row groups it needs. out replaces
// what was there whole, or not at all (it is written beside and renamed);
// it may not be one of the input files. Its errors are Open's and
// Stream.Fill's (the data), an *OutError, or the writing's.
func Convert(ctx context.Context, paths []string, opts Options, out string) (*Converted, error) {
	if !strings.EqualFold(extOf(out), ".parquet") {
		return nil, &OutError{Path: out, Msg: "the file to write must be named .parquet"}
	}
	if info, err := os.Stat(out); err == nil && info.IsDir() {
		return nil, &OutError{Path: out, Msg: "is a folder"}
	}
	opts.sort = true
	s, err := Open(ctx, paths, opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if in, ok := s.sameFile(out); ok {
		return nil, &OutError{Path: out, Msg: "is an input (" + in + "): write the converted file elsewhere"}
	}
	st, err := s.Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	f, err := atomicfile.Create(out)
	if err != nil {
		return nil, err
	}
	done := false
	defer func() {
		if !done {
			f.Abort()
		}
	}()
	w := parquet.NewGenericWriter[convertedBar](f, parquet.Compression(&parquet.Zstd),
		parquet.MaxRowsPerRowGroup(ConvertRowGroup), parquet.CreatedBy("stratbench", "", ""))
	rows := make([]convertedBar, 0, blockBars)
	flush := func() error {
		_, err := w.Write(rows)
		rows = rows[:0]
		return err
	}
	for pos := 0; pos < st.Events(); {
		bars, first, err := st.Fill(pos + chunkBars)
		if err != nil {
			return nil, err
		}
		for i := pos - first; i < bars.Len(); i++ {
			rows = append(rows, convertedBar{Timestamp: bars.Time[i], Symbol: s.symbols[bars.Symbol[i]],
				Open: bars.Open[i], High: bars.High[i], Low: bars.Low[i], Close: bars.Close[i], Volume: bars.Volume[i]})
			if len(rows) == cap(rows) {
				if err := flush(); err != nil {
					return nil, err
				}
			}
		}
		pos = first + bars.Len()
		st.Release(pos)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	fp, err := s.Digest(ctx)
	if err != nil {
		return nil, err
	}
	if err := f.Commit(0o644, atomicfile.Durable); err != nil {
		return nil, err
	}
	done = true
	res := &Converted{Out: out, Bars: s.info.Events, Symbols: s.Symbols(), From: s.info.From, To: s.info.To,
		RowGroups: int((s.info.Events + ConvertRowGroup - 1) / ConvertRowGroup), Fingerprint: fp}
	if info, err := os.Stat(out); err == nil {
		res.Bytes = info.Size()
	}
	return res, nil
}
