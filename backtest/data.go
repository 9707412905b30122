package backtest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"stratbench/contract"
)

// DataError is a problem with bar data, found while loading it. Line is
// 1-based and 0 when the problem is not on one line; Field is empty when it
// is not about one field.
type DataError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *DataError) Error() string {
	s := "read bars " + e.File
	if e.Line > 0 {
		s += " line " + strconv.Itoa(e.Line)
	}
	if e.Field != "" {
		s += " field " + strconv.Quote(e.Field)
	}
	return s + ": " + e.Msg
}

// Data is a loaded bar data set: every bar of every symbol in one time-ordered
// stream, stored column by column (about 52 bytes per bar). It is immutable
// after loading and safe to share between runs and goroutines.
type Data struct {
	source  string
	symbols []string
	bars    contract.Bars
	// digest identifies the content the bars were read from (the file's
	// SHA-256, or the generator's version for the bundled sample).
	digest [sha256.Size]byte
}

// Bars returns every bar in replay order. The columns are shared: callers
// must not modify them.
func (d *Data) Bars() contract.Bars { return d.bars }

// Symbols returns the symbol table in order of first appearance in the
// source; contract.Bars.Symbol indexes into it. Callers must not modify it.
func (d *Data) Symbols() []string { return d.symbols }

// Info describes the whole data set.
func (d *Data) Info() contract.DataInfo { return d.info(0, d.bars.Len()) }

func (d *Data) info(lo, hi int) contract.DataInfo {
	info := contract.DataInfo{Source: d.source, Events: hi - lo, Symbols: slices.Clone(d.symbols)}
	if hi > lo {
		info.From = formatTime(d.bars.Time[lo])
		info.To = formatTime(d.bars.Time[hi-1])
	}
	return info
}

// sizeBytes is the memory the columns hold.
func (d *Data) sizeBytes() int64 {
	n := int64(d.bars.Len())
	s := n * (8 + 4 + 5*8)
	for _, sym := range d.symbols {
		s += int64(len(sym)) + 16
	}
	return s
}

// Window restricts a replay to bars whose time is within [From, To]. A zero
// From or To leaves that end open.
type Window struct {
	From, To time.Time
}

// ParseWindow parses the --from and --to flags with ParseTime; an empty
// string leaves that end open.
func ParseWindow(from, to string) (Window, error) {
	var w Window
	var err error
	if from != "" {
		if w.From, err = ParseTime(from); err != nil {
			return Window{}, fmt.Errorf("--from: %w", err)
		}
	}
	if to != "" {
		if w.To, err = ParseTime(to); err != nil {
			return Window{}, fmt.Errorf("--to: %w", err)
		}
	}
	if !w.From.IsZero() && !w.To.IsZero() && w.To.Before(w.From) {
		return Window{}, fmt.Errorf("--to %s is before --from %s", to, from)
	}
	return w, nil
}

func (w Window) String() string {
	end := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	return end(w.From) + ".." + end(w.To)
}

// rangeOf returns the rows [lo, hi) of d inside w.
func (w Window) rangeOf(d *Data) (lo, hi int) {
	times := d.bars.Time
	lo, hi = 0, len(times)
	if !w.From.IsZero() {
		from := clampUnixNano(w.From)
		lo = sort.Search(len(times), func(i int) bool { return times[i] >= from })
	}
	if !w.To.IsZero() {
		to := clampUnixNano(w.To)
		hi = sort.Search(len(times), func(i int) bool { return times[i] > to })
	}
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

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

// dataHash identifies the replayed bars: the source content and the event
// range taken from it.
func (d *Data) dataHash(lo, hi int) string {
	h := sha256.New()
	h.Write(d.digest[:])
	var buf [16]byte
	binary.LittleEndian.PutUint64(buf[0:8], uint64(lo))
	binary.LittleEndian.PutUint64(buf[8:16], uint64(hi))
	h.Write(buf[:])
	return hex.EncodeToString(h.Sum(nil))
}
