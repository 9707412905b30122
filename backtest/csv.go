package backtest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxLineBytes bounds one line of bar data.
const maxLineBytes = 64 << 10

// lineReader yields the lines of r without their line endings, counting them.
type lineReader struct {
	r        *bufio.Reader
	line     int   // number of the line last returned
	consumed int64 // bytes consumed so far
	file     string
}

func newLineReader(file string, r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, maxLineBytes), file: file}
}

// next returns the next line, valid until the following call, or io.EOF.
func (lr *lineReader) next() ([]byte, error) {
	b, err := lr.r.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, &DataError{File: lr.file, Line: lr.line + 1, Msg: "line longer than " + strconv.Itoa(maxLineBytes) + " bytes"}
	case err == io.EOF && len(b) == 0:
		return nil, io.EOF
	case err != nil && err != io.EOF:
		return nil, fmt.Errorf("read bars %s: %w", lr.file, err)
	}
	lr.line++
	lr.consumed += int64(len(b))
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if lr.line == 1 {
		b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	}
	return b, nil
}

// parseCSV reads bars in CSV form. size is the input's length in bytes when
// known (0 otherwise), used to size the columns up front.
func parseCSV(file string, r io.Reader, size int64, b *builder) error {
	lr := newLineReader(file, r)
	var header []byte
	for {
		line, err := lr.next()
		if err == io.EOF {
			return &DataError{File: file, Msg: "empty file"}
		}
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			header = line
			break
		}
	}
	headerLine := lr.line
	fields, err := splitCSV(header, nil)
	if err != nil {
		return &DataError{File: file, Line: headerLine, Msg: "header: " + err.Error()}
	}
	var pos [numColumns]int
	for c := range pos {
		pos[c] = -1
	}
	for i, f := range fields {
		name := strings.ToLower(string(bytes.TrimSpace(f)))
		for c, want := range columnNames {
			if name == want {
				if pos[c] >= 0 {
					return &DataError{File: file, Line: headerLine, Field: want, Msg: "duplicate column"}
				}
				pos[c] = i
			}
		}
	}
	for c, p := range pos {
		if p < 0 {
			return &DataError{File: file, Line: headerLine, Field: columnNames[c],
				Msg: "missing column (the header needs " + strings.Join(columnNames[:], ",") + ")"}
		}
	}
	ncols := len(fields)
	var raw [numColumns][]byte
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		fields, err = splitCSV(line, fields[:0])
		if err != nil {
			return &DataError{File: file, Line: lr.line, Msg: err.Error()}
		}
		if len(fields) != ncols {
			return &DataError{File: file, Line: lr.line,
				Msg: strconv.Itoa(len(fields)) + " fields, the header has " + strconv.Itoa(ncols)}
		}
		for c, p := range pos {
			raw[c] = trimSpace(fields[p])
		}
		if err := b.add(lr.line, &raw); err != nil {
			return err
		}
		b.grow(size, lr.consumed)
	}
	if b.cols.Len() == 0 {
		return &DataError{File: file, Msg: "no bars after the header"}
	}
	return nil
}

// splitCSV splits one CSV record into dst. Fields may be quoted as in RFC
// 4180, without line breaks inside quotes; a quoted field is returned
// without its quotes and with doubled quotes unescaped.
func splitCSV(line []byte, dst [][]byte) ([][]byte, error) {
	if bytes.IndexByte(line, '"') >= 0 {
		return splitQuoted(line, dst)
	}
	// Fields are short: a plain loop beats bytes.IndexByte per field.
	start := 0
	for i := 0; i < len(line); i++ {
		if line[i] == ',' {
			dst = append(dst, line[start:i])
			start = i + 1
		}
	}
	return append(dst, line[start:]), nil
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
