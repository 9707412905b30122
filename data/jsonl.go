package data

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// JSON value kinds as scanned.
const (
	kindString = iota + 1
	kindNumber
	kindOther // true, false, null, an object or an array
)

// scanBarObject reads one JSON object and stores the raw text of the bar
// fields in raw (strings unquoted). It returns the offending field (when
// there is one) and a message, or an empty message when the line is a valid
// object carrying every bar field.
func scanBarObject(line []byte, raw *[numColumns][]byte) (field, msg string) {
	var seen [numColumns]bool
	s := jsonScanner{b: line}
	s.skipSpace()
	if !s.consume('{') {
		return "", "not a JSON object"
	}
	s.skipSpace()
	if !s.consume('}') {
		for {
			s.skipSpace()
			key, ok := s.str()
			if !ok {
				return "", "invalid JSON: " + s.errMsg()
			}
			s.skipSpace()
			if !s.consume(':') {
				return "", "invalid JSON: " + s.errMsg()
			}
			s.skipSpace()
			val, kind, ok := s.value()
			if !ok {
				return "", "invalid JSON: " + s.errMsg()
			}
			col := -1
			for c, name := range columnNames {
				if string(key) == name {
					col = c
				}
			}
			if col >= 0 {
				name := columnNames[col]
				if seen[col] {
					return name, "appears twice"
				}
				seen[col] = true
				switch {
				case col == colSymbol && kind != kindString:
					return name, "must be a string, got " + describeJSON(val)
				case col != colSymbol && kind == kindOther:
					return name, "must be a number or a string, got " + describeJSON(val)
				}
				raw[col] = val
			}
			s.skipSpace()
			if s.consume(',') {
				continue
			}
			if s.consume('}') {
				break
			}
			return "", "invalid JSON: " + s.errMsg()
		}
	}
	s.skipSpace()
	if s.i != len(s.b) {
		return "", "invalid JSON: text after the object"
	}
	for c, ok := range seen {
		if !ok {
			return columnNames[c], "missing"
		}
	}
	return "", ""
}

// describeJSON names a JSON value for a message.
func describeJSON(v []byte) string {
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return string(v)
}

// jsonScanner is a small scanner for one flat JSON object per line. It
// accepts exactly the JSON grammar (checked against encoding/json by
// FuzzJSONL); nested values are validated with encoding/json.
type jsonScanner struct {
	b []byte
	i int
}

func (s *jsonScanner) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScanner) consume(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *jsonScanner) errMsg() string {
	if s.i >= len(s.b) {
		return "unexpected end of line"
	}
	return "unexpected " + strconv.QuoteRune(rune(s.b[s.i])) + " at column " + strconv.Itoa(s.i+1)
}

// str scans a string and returns its content, unescaped.
func (s *jsonScanner) str() ([]byte, bool) {
	if !s.consume('"') {
		return nil, false
	}
	start := s.i
	escaped := false
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			content := s.b[start:s.i]
			s.i++
			if escaped {
				var out string
				if err := json.Unmarshal(s.b[start-1:s.i], &out); err != nil {
					s.i = start
					return nil, false
				}
				return []byte(out), true
			}
			return content, true
		case c == '\\':
			escaped = true
			s.i += 2
		case c < 0x20:
			return nil, false
		default:
			s.i++
		}
	}
	return nil, false
}

// value scans any JSON value and returns its text (a string's content).
func (s *jsonScanner) value() ([]byte, int, bool) {
	if s.i >= len(s.b) {
		return nil, 0, false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		v, ok := s.str()
		return v, kindString, ok
	case c == '-' || c >= '0' && c <= '9':
		v, ok := s.number()
		return v, kindNumber, ok
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '{' || c == '[':
		v, ok := s.nested()
		return v, kindOther, ok
	}
	return nil, 0, false
}

func (s *jsonScanner) literal(word string) ([]byte, int, bool) {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return nil, 0, false
	}
	v := s.b[s.i : s.i+len(word)]
	s.i += len(word)
	return v, kindOther, true
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jsonScanner) number() ([]byte, bool) {
	start := s.i
	s.consume('-')
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	// A leading zero stands alone: "01" is not a JSON number.
	if !s.consume('0') && digits() == 0 {
		return nil, false
	}
	if s.consume('.') && digits() == 0 {
		return nil, false
	}
	if s.consume('e') || s.consume('E') {
		if !s.consume('+') {
			s.consume('-')
		}
		if digits() == 0 {
			return nil, false
		}
	}
	return s.b[start:s.i], true
}

// nested scans an object or array, respecting strings, and validates it.
func (s *jsonScanner) nested() ([]byte, bool) {
	start := s.i
	depth := 0
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				s.i++
				v := s.b[start:s.i]
				if !json.Valid(v) {
					s.i = start
					return nil, false
				}
				return v, true
			}
		case '"':
			if _, ok := s.str(); !ok {
				return nil, false
			}
			continue
		}
		s.i++
	}
	return nil, false
}
