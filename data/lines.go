package data

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"strconv"
	"strings"
)

// maxLineBytes bounds one line of bar data.
const maxLineBytes = 64 << 10

// lineReader yields the lines of r without their line endings, counting
// them and the bytes before each.
type lineReader struct {
	r        *bufio.Reader
	line     int64 // number of the line last returned
	start    int64 // offset of the line last returned, from the reader's start
	consumed int64 // bytes consumed so far
	file     string
	raw      []byte // the line last returned as it was read, line ending included
}

// newLineReader reads r, whose first line is line firstLine+1 of file.
func newLineReader(file string, r io.Reader, firstLine int64, bufSize int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, bufSize), file: file, line: firstLine}
}

// reset makes lr read r, whose first line is line firstLine+1, keeping
// its buffer.
func (lr *lineReader) reset(r io.Reader, firstLine int64) {
	lr.r.Reset(r)
	lr.line, lr.start, lr.consumed, lr.raw = firstLine, 0, 0, nil
}

// next returns the next line, valid until the following call, or io.EOF.
func (lr *lineReader) next() ([]byte, error) {
	b, err := lr.r.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, lineTooLong(lr.file, lr.line+1)
	case err == io.EOF && len(b) == 0:
		return nil, io.EOF
	case err != nil && err != io.EOF:
		return nil, &Error{File: lr.file, Msg: err.Error(), Err: err}
	}
	lr.line++
	lr.start = lr.consumed
	lr.consumed += int64(len(b))
	lr.raw = b
	return lineText(b, lr.line), nil
}

// lineText is line number n as read (raw, its ending included) without
// its ending, and without the BOM that may start line 1.
func lineText(raw []byte, n int64) []byte {
	b := bytes.TrimSuffix(raw, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if n == 1 {
		b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	}
	return b
}

// lineTooLong is the error of line n of file, longer than maxLineBytes.
func lineTooLong(file string, n int64) *Error {
	return &Error{File: file, Line: n, Msg: "line longer than " + strconv.Itoa(maxLineBytes) + " bytes"}
}

// lineFormat reads the fields of one line of a CSV or JSON Lines file.
type lineFormat struct {
	jsonl bool
	// CSV: the position of each bar column in a line, and the number of
	// fields the header has.
	pos    [numColumns]int
	fields int
	split  [][]byte // scratch for splitCSV
}

// readHeader reads the header of a CSV file from lr: the first line that is
// not blank. It looks at ctx every markEvery blank lines.
func (lf *lineFormat) readHeader(ctx context.Context, lr *lineReader) error {
	var header []byte
	for {
		if lr.line%markEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		line, err := lr.next()
		if err == io.EOF {
			return &Error{File: lr.file, Msg: "empty file"}
		}
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			header = line
			break
		}
	}
	fields, err := splitCSV(header, nil)
	if err != nil {
		return &Error{File: lr.file, Line: lr.line, Msg: "header: " + err.Error()}
	}
	for c := range lf.pos {
		lf.pos[c] = -1
	}
	for i, f := range fields {
		name := strings.ToLower(string(bytes.TrimSpace(f)))
		for c, want := range columnNames {
			if name == want {
				if lf.pos[c] >= 0 {
					return &Error{File: lr.file, Line: lr.line, Column: want, Msg: "duplicate column"}
				}
				lf.pos[c] = i
			}
		}
	}
	for c, p := range lf.pos {
		if p < 0 {
			return &Error{File: lr.file, Line: lr.line, Column: columnNames[c],
				Msg: "missing column (the header needs " + strings.Join(columnNames[:], ",") + ")"}
		}
	}
	lf.fields = len(fields)
	return nil
}

// read stores the raw text of the bar fields of a line that is not blank in
// raw (JSON strings unquoted).
func (lf *lineFormat) read(file string, lineNo int64, line []byte, raw *[numColumns][]byte) error {
	if lf.jsonl {
		if field, msg := scanBarObject(line, raw); msg != "" {
			return &Error{File: file, Line: lineNo, Column: field, Msg: msg}
		}
		return nil
	}
	fields, err := splitCSV(line, lf.split[:0])
	lf.split = fields
	if err != nil {
		return &Error{File: file, Line: lineNo, Msg: err.Error()}
	}
	if len(fields) != lf.fields {
		return &Error{File: file, Line: lineNo,
			Msg: strconv.Itoa(len(fields)) + " fields, the header has " + strconv.Itoa(lf.fields)}
	}
	for c, p := range lf.pos {
		raw[c] = trimSpace(fields[p])
	}
	return nil
}

// blank reports whether a line holds nothing to read.
func blank(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

// timeParser parses timestamps, remembering the last one: rows of several
// symbols often share their timestamp text.
type timeParser struct {
	lastText []byte
	last     int64
	have     bool
}

func (p *timeParser) parse(file string, line int64, raw []byte) (int64, error) {
	if p.have && bytes.Equal(raw, p.lastText) {
		return p.last, nil
	}
	ts, err := parseTimestamp(raw)
	if err != nil {
		return 0, &Error{File: file, Line: line, Column: "timestamp", Msg: err.Error() + ": " + quoteField(raw)}
	}
	p.last, p.lastText, p.have = ts, append(p.lastText[:0], raw...), true
	return ts, nil
}

// parseValues parses and checks the prices and volume of a line.
func parseValues(file string, line int64, raw *[numColumns][]byte, v *[numColumns]float64) error {
	for c := colOpen; c <= colVolume; c++ {
		f, msg := parseNumber(c, raw[c])
		if msg != "" {
			return &Error{File: file, Line: line, Column: columnNames[c], Msg: msg}
		}
		v[c] = f
	}
	if c, msg := barProblem(v[colOpen], v[colHigh], v[colLow], v[colClose]); c >= 0 {
		return &Error{File: file, Line: line, Column: columnNames[c], Msg: msg}
	}
	return nil
}

// formatFor returns the line format of a file by its name, or by its first
// bytes when the name does not tell: JSON Lines when they start with "{".
func formatFor(name string, head []byte) bool {
	switch strings.ToLower(extOf(name)) {
	case ".jsonl", ".ndjson", ".json":
		return true
	case ".csv":
		return false
	}
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{'
}

// splitCSV splits one CSV record into dst. Fields may be quoted as in RFC
// 4180, without line breaks inside quotes; a quoted field is returned
// without its quotes and with doubled quotes unescaped.
func splitCSV(line []byte, dst [][]byte) ([][]byte, error) {
	// Fields are short (bytes.IndexByte per field costs more than it
	// finds): the commas and quotes of eight bytes at a time are found
	// with word operations, a third of the scan's time on a line of bars
	// read byte by byte.
	first := len(dst)
	start, i := 0, 0
	for ; i+8 <= len(line); i += 8 {
		w := binary.LittleEndian.Uint64(line[i:])
		if bytesEqual(w, '"') != 0 {
			return splitQuoted(line, dst[:first])
		}
		for c := bytesEqual(w, ','); c != 0; c &= c - 1 {
			j := i + bits.TrailingZeros64(c)>>3
			dst = append(dst, line[start:j])
			start = j + 1
		}
	}
	for ; i < len(line); i++ {
		switch line[i] {
		case '"':
			return splitQuoted(line, dst[:first])
		case ',':
			dst = append(dst, line[start:i])
			start = i + 1
		}
	}
	return append(dst, line[start:]), nil
}

// bytesEqual returns the bytes of w equal to b, as 0x80 in each of them and
// 0 elsewhere (exactly: no borrow runs from one byte into the next).
func bytesEqual(w uint64, b byte) uint64 {
	const lows, highs = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	x := w ^ (0x0101010101010101 * uint64(b)) // 0 where w's byte is b
	return ^((x&lows + lows) | x | lows) & highs
}

// splitQuoted is splitCSV for a line with quotes.
func splitQuoted(line []byte, dst [][]byte) ([][]byte, error) {
	for {
		f := bytes.TrimLeft(line, " \t")
		if len(f) == 0 || f[0] != '"' {
			i := bytes.IndexByte(line, ',')
			if i < 0 {
				if bytes.IndexByte(line, '"') >= 0 {
					return nil, errors.New(`bare " in an unquoted field`)
				}
				return append(dst, line), nil
			}
			if bytes.IndexByte(line[:i], '"') >= 0 {
				return nil, errors.New(`bare " in an unquoted field`)
			}
			dst = append(dst, line[:i])
			line = line[i+1:]
			continue
		}
		// Quoted field: find the closing quote, unescaping "" pairs.
		f = f[1:]
		var val []byte
		escaped := false
		i := 0
		for {
			j := bytes.IndexByte(f[i:], '"')
			if j < 0 {
				return nil, errors.New("unterminated quoted field")
			}
			i += j
			if i+1 < len(f) && f[i+1] == '"' {
				escaped = true
				i += 2
				continue
			}
			break
		}
		val = f[:i]
		if escaped {
			val = bytes.ReplaceAll(val, []byte(`""`), []byte(`"`))
		}
		rest := bytes.TrimLeft(f[i+1:], " \t")
		dst = append(dst, val)
		if len(rest) == 0 {
			return dst, nil
		}
		if rest[0] != ',' {
			return nil, errors.New(`text after a closing quote`)
		}
		line = rest[1:]
	}
}

// trimSpace is bytes.TrimSpace for ASCII blanks, without a call for the
// common field that has none.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}
