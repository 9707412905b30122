package data

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Bars is a column-oriented run of bars. All columns have the same length.
// Its fields match the replay's batch type field for field, so that a Bars
// converts to it without copying.
type Bars struct {
	Time   []int64 // unix nanoseconds, UTC
	Symbol []int32 // index into the set's symbol table (Set.Symbols)
	Open   []float64
	High   []float64
	Low    []float64
	Close  []float64
	Volume []float64
}

// Len returns the number of bars.
func (b Bars) Len() int { return len(b.Time) }

// Slice returns rows [i, j) without copying.
func (b Bars) Slice(i, j int) Bars {
	return Bars{b.Time[i:j], b.Symbol[i:j], b.Open[i:j], b.High[i:j], b.Low[i:j], b.Close[i:j], b.Volume[i:j]}
}

// barBytes is the memory one bar takes in Bars.
const barBytes = 8 + 4 + 5*8

// makeBars returns empty columns with room for n bars.
func makeBars(n int) Bars {
	return Bars{
		Time: make([]int64, 0, n), Symbol: make([]int32, 0, n),
		Open: make([]float64, 0, n), High: make([]float64, 0, n), Low: make([]float64, 0, n),
		Close: make([]float64, 0, n), Volume: make([]float64, 0, n),
	}
}

// appendBars appends rows [i, j) of src to dst.
func appendBars(dst Bars, src Bars, i, j int) Bars {
	dst.Time = append(dst.Time, src.Time[i:j]...)
	dst.Symbol = append(dst.Symbol, src.Symbol[i:j]...)
	dst.Open = append(dst.Open, src.Open[i:j]...)
	dst.High = append(dst.High, src.High[i:j]...)
	dst.Low = append(dst.Low, src.Low[i:j]...)
	dst.Close = append(dst.Close, src.Close[i:j]...)
	dst.Volume = append(dst.Volume, src.Volume[i:j]...)
	return dst
}

// truncate returns b cut to its first n rows, keeping the capacity.
func (b Bars) truncate(n int) Bars {
	return Bars{b.Time[:n], b.Symbol[:n], b.Open[:n], b.High[:n], b.Low[:n], b.Close[:n], b.Volume[:n]}
}

// Window restricts data to bars whose time is within [From, To], both ends
// inclusive. A zero From or To leaves that end open.
type Window struct {
	From, To time.Time
}

// ParseWindow parses a window's ends (the --from and --to flags) with
// ParseTime; an empty string leaves that end open. A bare date in --to
// ("2026-01-05") means the end of that day, its last nanosecond, as date
// ranges read: --from 2026-01-05 --to 2026-01-05 is that whole day. A
// time, and a bare date in --from, mean that instant (midnight for the
// date). Its errors are *WindowErrors.
func ParseWindow(from, to string) (Window, error) {
	var w Window
	var err error
	if from != "" {
		if w.From, err = ParseTime(from); err != nil {
			return Window{}, &WindowError{Option: OptionFrom, Value: from, Err: err}
		}
	}
	if to != "" {
		if w.To, err = ParseTime(to); err != nil {
			return Window{}, &WindowError{Option: OptionTo, Value: to, Err: err}
		}
		if IsBareDate(to) {
			w.To = w.To.Add(24*time.Hour - time.Nanosecond)
		}
	}
	if !w.From.IsZero() && !w.To.IsZero() && w.To.Before(w.From) {
		return Window{}, &WindowError{Option: OptionTo, Value: to, From: from}
	}
	return w, nil
}

// The ends of a Window, for WindowError.
const (
	OptionFrom = "From"
	OptionTo   = "To"
)

// WindowError is a window ParseWindow cannot make: an end that is not a
// time (Err says why), or a To before the From. Option names the end at
// fault (OptionFrom, OptionTo), never a flag: a command names the one that
// gave it. It is bad usage.
type WindowError struct {
	Option string // OptionFrom or OptionTo
	Value  string // the end as given
	Err    error  // why it is not a time; nil for a To before the From
	From   string // with a nil Err: the From the To is before
}

func (e *WindowError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("the window's end %s is before its start %s", e.Value, e.From)
	}
	return fmt.Sprintf("the window's %s: %v", e.Option, e.Err)
}

func (e *WindowError) Unwrap() error { return e.Err }

// String renders the window as FROM..TO in RFC 3339, "-" for an open end.
func (w Window) String() string {
	end := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	return end(w.From) + ".." + end(w.To)
}

// bounds returns the window as inclusive unix nanoseconds, open ends
// saturated.
func (w Window) bounds() span {
	s := span{math.MinInt64, math.MaxInt64}
	if !w.From.IsZero() {
		s.from = clampUnixNano(w.From)
	}
	if !w.To.IsZero() {
		s.to = clampUnixNano(w.To)
	}
	return s
}

// span is an inclusive range of unix nanoseconds.
type span struct{ from, to int64 }

func (s span) contains(t int64) bool { return t >= s.from && t <= s.to }

// overlaps reports whether [lo, hi] meets the span.
func (s span) overlaps(lo, hi int64) bool { return hi >= s.from && lo <= s.to }

// clampUnixNano is t.UnixNano, saturated where that overflows.
func clampUnixNano(t time.Time) int64 {
	switch s := t.Unix(); {
	case s <= minUnixSeconds:
		return math.MinInt64
	case s >= maxUnixSeconds:
		return math.MaxInt64
	}
	return t.UnixNano()
}

// Info describes the bars a set replays.
type Info struct {
	Source  string    // the paths the set was opened from, as given, joined by ", "
	Events  int64     // bars inside the window: the replay's events
	From    time.Time // time of the first event (zero without events)
	To      time.Time // time of the last event
	Symbols []string  // the symbol table, sorted (see Set.Symbols)
	Files   int       // data files read
	// Resident reports whether the set's bars are decoded in memory (they
	// fit the budget) rather than streamed from the files on each replay.
	Resident bool
}

// Error is a problem with bar data: the file, where in it, and what. Line
// is the 1-based line of a CSV or JSON Lines file, Row the 1-based row of a
// Parquet file (0 when the problem is not about one line or row); Column is
// the column (field) the problem is in, empty when it is not about one.
//
// Every error of Open about the data is an *Error; so is an error of
// Stream.Fill about a bar met while the data streams (bad data that was
// not checked before the replay, or a file that changed while it was
// read). Both are bad input: the command exits with status 2, and a job
// that meets one mid-replay fails with kind "data".
type Error struct {
	File   string
	Line   int64
	Row    int64
	Column string
	Msg    string
	Err    error // the underlying error (I/O, the Parquet decoder), if any

	columnar bool // a Parquet file's: it has rows and columns, not lines and fields
}

func (e *Error) Error() string {
	s := "read bars " + e.File
	field := "field"
	if e.columnar || e.Row > 0 {
		field = "column"
	}
	switch {
	case e.Line > 0:
		s += " line " + strconv.FormatInt(e.Line, 10)
	case e.Row > 0:
		s += " row " + strconv.FormatInt(e.Row, 10)
	}
	if e.Column != "" {
		s += " " + field + " " + strconv.Quote(e.Column)
	}
	return s + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }
