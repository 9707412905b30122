package backtest

import (
	"bytes"
	"crypto/sha256"
	"math"
	"strconv"
	"unicode/utf8"

	"stratbench/contract"
)

// Column positions of a bar's fields, shared by the CSV and JSONL readers.
const (
	colTimestamp = iota
	colSymbol
	colOpen
	colHigh
	colLow
	colClose
	colVolume
	numColumns
)

// columnNames are the field names of bar data, in column order.
var columnNames = [numColumns]string{"timestamp", "symbol", "open", "high", "low", "close", "volume"}

// maxSymbolLen bounds a symbol's length in bytes.
const maxSymbolLen = 64

// builder collects validated rows in file order and turns them into Data.
type builder struct {
	file     string
	symIndex map[string]int32
	symbols  []string
	lastTime []int64 // per symbol: time of its latest row
	lastLine []int   // per symbol: line of its latest row
	cols     contract.Bars
	// ordered records whether the rows so far are already in replay order
	// (time, then symbol table order), so that most files need no sort.
	ordered  bool
	prevTime int64
	prevSym  int32
	lastSym  string // symbol of the previous row, to skip the map lookup
	lastIdx  int32
	// The previous row's timestamp, as text and parsed.
	lastTsText []byte
	lastTs     int64
}

func newBuilder(file string) *builder {
	return &builder{file: file, symIndex: make(map[string]int32), ordered: true, lastIdx: -1}
}

// reserve grows the columns' capacity to n rows.
func (b *builder) reserve(n int) {
	if n <= cap(b.cols.Time) {
		return
	}
	grow := func(s []float64) []float64 { return append(make([]float64, 0, n), s...) }
	b.cols = contract.Bars{
		Time:   append(make([]int64, 0, n), b.cols.Time...),
		Symbol: append(make([]int32, 0, n), b.cols.Symbol...),
		Open:   grow(b.cols.Open),
		High:   grow(b.cols.High),
		Low:    grow(b.cols.Low),
		Close:  grow(b.cols.Close),
		Volume: grow(b.cols.Volume),
	}
}

// grow reserves room for the rest of a file of size bytes, of which
// consumed are read: a first estimate once 256 rows show how long a row is,
// and a new one whenever the columns are full (the first rows were longer
// than the rest: growing by doubling would hold up to twice the data).
func (b *builder) grow(size, consumed int64) {
	if n := b.cols.Len(); n != 256 && n != cap(b.cols.Time) {
		return
	}
	n := int64(b.cols.Len())
	if size <= 0 || consumed <= 0 || n == 0 {
		return
	}
	perRow := float64(consumed) / float64(n)
	est := float64(size)/perRow*1.03 + 64
	if est > float64(math.MaxInt32) {
		return
	}
	b.reserve(max(int(est), int(n+n/16+64)))
}

func (b *builder) errorf(line int, field, msg string) *DataError {
	return &DataError{File: b.file, Line: line, Field: field, Msg: msg}
}

// add validates one row given as the raw text of its fields (JSON strings
// already unquoted) and appends it.
func (b *builder) add(line int, raw *[numColumns][]byte) error {
	// Rows of several symbols often share their timestamp text.
	ts := b.lastTs
	if !bytes.Equal(raw[colTimestamp], b.lastTsText) || b.cols.Len() == 0 {
		var err error
		if ts, err = parseTimestamp(raw[colTimestamp]); err != nil {
			return b.errorf(line, "timestamp", err.Error()+": "+quoteField(raw[colTimestamp]))
		}
		b.lastTs, b.lastTsText = ts, append(b.lastTsText[:0], raw[colTimestamp]...)
	}
	sym, err := b.symbol(line, raw[colSymbol])
	if err != nil {
		return err
	}
	var v [numColumns]float64
	for c := colOpen; c <= colVolume; c++ {
		var err error
		if v[c], err = b.number(line, c, raw[c]); err != nil {
			return err
		}
	}
	open, high, low, cl, vol := v[colOpen], v[colHigh], v[colLow], v[colClose], v[colVolume]
	if high < max(open, cl) {
		return b.errorf(line, "high", fmtFloat(high)+" is below max(open, close) "+fmtFloat(max(open, cl)))
	}
	if low > min(open, cl) {
		return b.errorf(line, "low", fmtFloat(low)+" is above min(open, close) "+fmtFloat(min(open, cl)))
	}
	if int(sym) < len(b.lastTime) {
		if prev := b.lastTime[sym]; ts <= prev {
			what := " is before "
			if ts == prev {
				what = " duplicates "
			}
			return b.errorf(line, "timestamp", b.symbols[sym]+" "+formatTime(ts)+what+"line "+
				strconv.Itoa(b.lastLine[sym])+" ("+formatTime(prev)+"); each symbol's rows must be in strictly increasing time order")
		}
		b.lastTime[sym], b.lastLine[sym] = ts, line
	} else {
		b.lastTime = append(b.lastTime, ts)
		b.lastLine = append(b.lastLine, line)
	}
	if n := b.cols.Len(); n > 0 && (ts < b.prevTime || ts == b.prevTime && sym < b.prevSym) {
		b.ordered = false
	}
	b.prevTime, b.prevSym = ts, sym
	b.cols.Time = append(b.cols.Time, ts)
	b.cols.Symbol = append(b.cols.Symbol, sym)
	b.cols.Open = append(b.cols.Open, open)
	b.cols.High = append(b.cols.High, high)
	b.cols.Low = append(b.cols.Low, low)
	b.cols.Close = append(b.cols.Close, cl)
	b.cols.Volume = append(b.cols.Volume, vol)
	return nil
}

// symbol interns a symbol name.
func (b *builder) symbol(line int, raw []byte) (int32, error) {
	if b.lastIdx >= 0 && string(raw) == b.lastSym {
		return b.lastIdx, nil
	}
	if idx, ok := b.symIndex[string(raw)]; ok {
		b.lastSym, b.lastIdx = b.symbols[idx], idx
		return idx, nil
	}
	switch {
	case len(raw) == 0:
		return 0, b.errorf(line, "symbol", "empty")
	case len(raw) > maxSymbolLen:
		return 0, b.errorf(line, "symbol", "longer than "+strconv.Itoa(maxSymbolLen)+" bytes: "+quoteField(raw))
	case !printable(raw):
		return 0, b.errorf(line, "symbol", "not printable UTF-8 text: "+quoteField(raw))
	case len(b.symbols) == math.MaxInt32:
		return 0, b.errorf(line, "symbol", "too many symbols")
	}
	name := string(raw)
	idx := int32(len(b.symbols))
	b.symbols = append(b.symbols, name)
	b.symIndex[name] = idx
	b.lastSym, b.lastIdx = name, idx
	return idx, nil
}

func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return false
		}
	}
	return true
}

// number parses and checks one numeric field.
func (b *builder) number(line, col int, raw []byte) (float64, error) {
	field := columnNames[col]
	if len(raw) == 0 {
		return 0, b.errorf(line, field, "empty")
	}
	if f, ok := parseDecimal(raw); ok {
		if f <= 0 && col != colVolume {
			return 0, b.errorf(line, field, "must be > 0: "+quoteField(raw))
		}
		return f, nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrSyntax {
			return 0, b.errorf(line, field, "not a number: "+quoteField(raw))
		}
		return 0, b.errorf(line, field, "not a finite number: "+quoteField(raw))
	}
	if col == colVolume {
		if f < 0 {
			return 0, b.errorf(line, field, "must be >= 0: "+quoteField(raw))
		}
	} else if f <= 0 {
		return 0, b.errorf(line, field, "must be > 0: "+quoteField(raw))
	}
	return f, nil
}

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// parseDecimal parses a plain unsigned decimal ("123", "101.25") of at most
// 15 digits, the common case of bar data, faster than strconv.ParseFloat. The
// digits as an integer and the power of ten are both exact in a float64, so
// their quotient is correctly rounded: the same float strconv.ParseFloat (and
// Python's float) gives. Anything else is reported as not handled.
func parseDecimal(b []byte) (float64, bool) {
	var mant uint64
	digits, point := 0, -1
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9':
			if digits == 15 {
				return 0, false
			}
			mant = mant*10 + uint64(c-'0')
			digits++
		case c == '.' && point < 0:
			point = i
		default:
			return 0, false
		}
	}
	if digits == 0 {
		return 0, false
	}
	f := float64(mant)
	if point >= 0 {
		f /= pow10[len(b)-point-1]
	}
	return f, true
}

// quoteField quotes a field's text for a message, shortened when long.
func quoteField(raw []byte) string {
	const maxShown = 40
	if len(raw) > maxShown {
		return strconv.Quote(string(raw[:maxShown])) + "…"
	}
	return strconv.Quote(string(raw))
}

// fmtFloat formats a number for messages and the flags text: the shortest
// decimal that reads back to f, without an exponent.
func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// finish orders the rows for replay and returns the data set.
func (b *builder) finish(source string, digest [sha256.Size]byte) (*Data, error) {
	n := b.cols.Len()
	if n == 0 {
		return nil, &DataError{File: b.file, Msg: "no bars"}
	}
	cols := b.cols
	if !b.ordered {
		cols = permute(cols, mergeOrder(cols, len(b.symbols)))
	} else if cap(cols.Time) > n+n/16+64 {
		cols = permute(cols, nil)
	}
	return &Data{source: source, symbols: b.symbols, bars: cols, digest: digest}, nil
}

// mergeOrder returns the replay order of rows whose per-symbol sequences are
// each in increasing time order: by time, ties in symbol table order (the
// order of first appearance). It merges the per-symbol runs with a heap.
func mergeOrder(cols contract.Bars, nsym int) []int32 {
	n := cols.Len()
	// Group row indices by symbol, keeping file order within a symbol.
	start := make([]int32, nsym+1)
	for _, s := range cols.Symbol {
		start[s+1]++
	}
	for s := 0; s < nsym; s++ {
		start[s+1] += start[s]
	}
	runs := make([]int32, n)
	fill := append([]int32(nil), start[:nsym]...)
	for i, s := range cols.Symbol {
		runs[fill[s]] = int32(i)
		fill[s]++
	}
	// head[s] is the next position in runs of symbol s.
	head := append([]int32(nil), start[:nsym]...)
	less := func(a, b int32) bool {
		ta, tb := cols.Time[runs[head[a]]], cols.Time[runs[head[b]]]
		return ta < tb || ta == tb && a < b
	}
	heap := make([]int32, 0, nsym)
	for s := int32(0); s < int32(nsym); s++ {
		if start[s] < start[s+1] {
			heap = append(heap, s)
			siftUp(heap, len(heap)-1, less)
		}
	}
	order := make([]int32, 0, n)
	for len(heap) > 0 {
		s := heap[0]
		order = append(order, runs[head[s]])
		head[s]++
		if head[s] == start[s+1] {
			heap[0] = heap[len(heap)-1]
			heap = heap[:len(heap)-1]
		}
		siftDown(heap, 0, less)
	}
	return order
}

func siftUp(h []int32, i int, less func(a, b int32) bool) {
	for i > 0 {
		p := (i - 1) / 2
		if !less(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func siftDown(h []int32, i int, less func(a, b int32) bool) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && less(h[r], h[l]) {
			m = r
		}
		if !less(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// permute returns exactly sized copies of the columns, rows taken in order
// (all rows in place when order is nil).
func permute(c contract.Bars, order []int32) contract.Bars {
	n := c.Len()
	out := contract.Bars{
		Time: make([]int64, n), Symbol: make([]int32, n),
		Open: make([]float64, n), High: make([]float64, n), Low: make([]float64, n),
		Close: make([]float64, n), Volume: make([]float64, n),
	}
	if order == nil {
		copy(out.Time, c.Time)
		copy(out.Symbol, c.Symbol)
		copy(out.Open, c.Open)
		copy(out.High, c.High)
		copy(out.Low, c.Low)
		copy(out.Close, c.Close)
		copy(out.Volume, c.Volume)
		return out
	}
	for i, j := range order {
		out.Time[i] = c.Time[j]
		out.Symbol[i] = c.Symbol[j]
	}
	gather := func(dst, src []float64) {
		for i, j := range order {
			dst[i] = src[j]
		}
	}
	gather(out.Open, c.Open)
	gather(out.High, c.High)
	gather(out.Low, c.Low)
	gather(out.Close, c.Close)
	gather(out.Volume, c.Volume)
	return out
}
