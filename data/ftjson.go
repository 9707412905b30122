package data

import (
	"bufio"
	"compress/gzip"
	"context"
	"io"
	"math"
	"sort"
	"strconv"
)

// freqtrade's JSON data files (its json and jsongz formats) hold one JSON
// array of rows, each [date, open, high, low, close, volume] with date in
// unix milliseconds: pandas' DataFrame.to_json(orient="values"), gzipped
// for .json.gz. They are read as a table of rows: the scan reads the file
// from its start, marking every markEvery rows where it stood, so that a
// stream of a plain file starts at the last mark before its first row; a
// gzipped file cannot be entered in the middle and is read from its start,
// skipping rows.

// ftjsonFile is an open freqtrade JSON file.
type ftjsonFile struct {
	src      *source
	gz       bool
	symbol   string
	marks    []ftMark // plain files: where rows start, every markEvery rows
	scanning bool     // the next reader is the scan's: it marks
}

// ftMark is where row lies in a plain file: the offset of its "[".
type ftMark struct{ row, offset int64 }

func (jf *ftjsonFile) symbolColumn() bool { return false }
func (jf *ftjsonFile) oneSymbol() string  { return jf.symbol }
func (jf *ftjsonFile) usedRows() int64    { return -1 }

// openFTJSON opens a freqtrade JSON file; its symbol is the pair of its
// name (or of its partition folder).
func openFTJSON(src *source, gz bool) (*ftjsonFile, error) {
	e := src.entry
	jf := &ftjsonFile{src: src, gz: gz, scanning: true}
	switch {
	case e.symbol != "":
		jf.symbol = e.symbol
	case e.ft != nil:
		jf.symbol = e.ft.pair
		if msg := symbolProblem([]byte(jf.symbol)); msg != "" {
			return nil, &Error{File: src.path, Msg: "the pair of its freqtrade name is not a symbol: " + msg}
		}
	case gz:
		return nil, &Error{File: src.path, Msg: "a gzip-compressed file: stratbench reads freqtrade's .json.gz, named as freqtrade names it (PAIR-TIMEFRAME.json.gz)"}
	default:
		return nil, &Error{File: src.path, Msg: "a JSON array (freqtrade's format: [[ms, open, high, low, close, volume], ...]) needs the pair in its name, as freqtrade names it: PAIR-TIMEFRAME.json"}
	}
	src.timeColumn = "date"
	return jf, nil
}

// newReader reads rows [from, end).
func (jf *ftjsonFile) newReader(_ []int, syms symResolver, from, end int64) tableReader {
	r := &ftjsonReader{jf: jf, from: from, end: end, record: jf.scanning}
	jf.scanning = false
	r.sym, _ = syms.intern([]byte(jf.symbol))
	return r
}

// ftjsonReader reads the rows of a freqtrade JSON file.
type ftjsonReader struct {
	jf        *ftjsonFile
	from, end int64
	record    bool // the scan's reader: it marks where rows start
	sym       int32
	started   bool
	done      bool
	br        *bufio.Reader
	gzr       *gzip.Reader
	offset    int64 // of the next byte br returns (plain files)
	row       int64 // rows read (0-based index of the next)
	tok       []byte
}

func (r *ftjsonReader) close() {
	if r.gzr != nil {
		r.gzr.Close()
		r.gzr = nil
	}
	r.br = nil
}

func (r *ftjsonReader) fail(msg string) error {
	return &Error{File: r.jf.src.path, Row: r.row + 1, Msg: msg}
}

func (r *ftjsonReader) failColumn(c int, msg string) error {
	return r.jf.src.errorAt(r.row+1, r.jf.src.columnName(c), msg)
}

// start positions the reader before its first row: at the last mark
// before it in a plain file, at the array's start otherwise.
func (r *ftjsonReader) start() error {
	src := r.jf.src
	var base int64
	if !r.jf.gz && len(r.jf.marks) > 0 && r.from > 0 {
		k := sort.Search(len(r.jf.marks), func(i int) bool { return r.jf.marks[i].row > r.from }) - 1
		if k >= 0 {
			m := r.jf.marks[k]
			base, r.row = m.offset, m.row
		}
	}
	sec := io.NewSectionReader(src.fh, base, src.size-base)
	r.offset = base
	if r.jf.gz {
		gzr, err := gzip.NewReader(sec)
		if err != nil {
			return &Error{File: src.path, Msg: "not gzip-compressed: " + err.Error(), Err: err}
		}
		gzr.Multistream(true)
		r.gzr = gzr
		r.br = bufio.NewReaderSize(gzr, 64<<10)
	} else {
		r.br = bufio.NewReaderSize(sec, 64<<10)
	}
	if base == 0 {
		// The array's "[".
		c, err := r.nonSpace()
		if err != nil || c != '[' {
			return r.syntax(c, err, "the file starts with a JSON array")
		}
		if c, err = r.nonSpace(); err != nil {
			return r.syntax(c, err, "rows")
		}
		if c == ']' {
			return &Error{File: src.path, Msg: "no bars"}
		}
		r.unread()
	}
	return nil
}

func (r *ftjsonReader) readByte() (byte, error) {
	c, err := r.br.ReadByte()
	if err == nil {
		r.offset++
	}
	return c, err
}

func (r *ftjsonReader) unread() {
	r.br.UnreadByte()
	r.offset--
}

// nonSpace returns the next byte that is no JSON whitespace.
func (r *ftjsonReader) nonSpace() (byte, error) {
	for {
		c, err := r.readByte()
		if err != nil || c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c, err
		}
	}
}

// syntax is the error of an unexpected byte c (or of err) where want was.
func (r *ftjsonReader) syntax(c byte, err error, want string) error {
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return r.fail("truncated: the JSON array ends early (want " + want + ")")
	case err != nil:
		return &Error{File: r.jf.src.path, Msg: err.Error(), Err: err}
	}
	return r.fail("not freqtrade's JSON: " + strconv.QuoteRune(rune(c)) + " where " + want + " should be")
}

// read appends up to limit of the next rows to b.
func (r *ftjsonReader) read(b *block, limit int) (bool, error) {
	if r.done {
		return false, nil
	}
	if !r.started {
		r.started = true
		if err := r.start(); err != nil {
			return false, err
		}
	}
	var v [numColumns]float64
	for k := 0; k < limit; {
		if r.row >= r.end {
			r.done = true
			return k > 0, nil
		}
		at := r.offset
		t, more, err := r.readRow(&v)
		if err != nil {
			return false, err
		}
		if r.record && r.row%markEvery == 0 {
			r.jf.marks = append(r.jf.marks, ftMark{row: r.row, offset: at})
		}
		if r.row >= r.from {
			b.appendRow(t, r.sym, &v, r.row+1)
			k++
		}
		r.row++
		if !more {
			r.done = true
			return k > 0, r.finish()
		}
	}
	return true, nil
}

// finish checks that nothing but whitespace follows the array.
func (r *ftjsonReader) finish() error {
	if !r.record {
		return nil
	}
	c, err := r.nonSpace()
	switch {
	case err == io.EOF:
		return nil
	case err != nil:
		return &Error{File: r.jf.src.path, Msg: err.Error(), Err: err}
	}
	return &Error{File: r.jf.src.path, Msg: "text after the JSON array: " + strconv.QuoteRune(rune(c))}
}

// readRow reads one row, [ms, open, high, low, close, volume], and the ","
// or "]" after it; more is false after the last row.
func (r *ftjsonReader) readRow(v *[numColumns]float64) (t int64, more bool, err error) {
	if c, err := r.nonSpace(); err != nil || c != '[' {
		return 0, false, r.syntax(c, err, "a row's [")
	}
	for c := colTimestamp; c <= colVolume; c++ {
		if c == colSymbol {
			continue
		}
		if c != colTimestamp {
			if d, err := r.nonSpace(); err != nil || d != ',' {
				if err == nil && d == ']' {
					return 0, false, r.fail("a row of fewer than 6 values; freqtrade's rows are [date, open, high, low, close, volume]")
				}
				return 0, false, r.syntax(d, err, "a ,")
			}
		}
		tok, err := r.number()
		if err != nil {
			return 0, false, err
		}
		if string(tok) == "null" {
			return 0, false, r.failColumn(c, "null")
		}
		if c == colTimestamp {
			if t, err = r.millis(tok); err != nil {
				return 0, false, err
			}
			continue
		}
		f, err := strconv.ParseFloat(string(tok), 64)
		if err != nil || math.IsInf(f, 0) {
			return 0, false, r.failColumn(c, "not a finite number: "+quoteField(tok))
		}
		v[c] = f
	}
	c, err := r.nonSpace()
	if err != nil || c != ']' {
		if err == nil && c == ',' {
			return 0, false, r.fail("a row of more than 6 values; freqtrade's rows are [date, open, high, low, close, volume]")
		}
		return 0, false, r.syntax(c, err, "a row's ]")
	}
	c, err = r.nonSpace()
	switch {
	case err == nil && c == ',':
		return t, true, nil
	case err == nil && c == ']':
		return t, false, nil
	}
	return 0, false, r.syntax(c, err, "a , or the array's ]")
}

// number reads a JSON number (or null), at most 64 bytes of it.
func (r *ftjsonReader) number() ([]byte, error) {
	r.tok = r.tok[:0]
	c, err := r.nonSpace()
	for err == nil {
		if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' || c >= 'a' && c <= 'z') {
			r.unread()
			break
		}
		if len(r.tok) == 64 {
			return nil, r.fail("a value longer than 64 bytes")
		}
		r.tok = append(r.tok, c)
		c, err = r.readByte()
	}
	if err != nil && err != io.EOF {
		return nil, &Error{File: r.jf.src.path, Msg: err.Error(), Err: err}
	}
	if len(r.tok) == 0 {
		return nil, r.syntax(c, err, "a number")
	}
	return r.tok, nil
}

// millis converts a date of unix milliseconds (an integer, or a number
// with an integral value) to nanoseconds.
func (r *ftjsonReader) millis(tok []byte) (int64, error) {
	ms, err := strconv.ParseInt(string(tok), 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(string(tok), 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<62 {
			return 0, r.failColumn(colTimestamp, "not unix milliseconds: "+quoteField(tok))
		}
		ms = int64(f)
	}
	t, err := convertTime(convTimeMillis, ms)
	if err != nil {
		return 0, r.failColumn(colTimestamp, err.Error()+": "+quoteField(tok))
	}
	return t, nil
}

// prepare has nothing to do before the scan.
func (jf *ftjsonFile) prepare(context.Context) error { return nil }

// streamNeed is what a stream of the file holds at most: its read buffer,
// and gzip's window and state for a .json.gz.
func (jf *ftjsonFile) streamNeed() int64 { return 256 << 10 }
