package data

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"stratbench/internal/termtext"
)

// Column positions of a bar's fields, shared by every format.
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

// symbolProblem says what is wrong with a symbol's text, or "" when
// nothing is: a symbol is printable UTF-8 without control characters nor
// bidi controls (termtext.IsBidiControl), so that every printer can show
// it as it is.
func symbolProblem(raw []byte) string {
	switch {
	case len(raw) == 0:
		return "empty"
	case len(raw) > maxSymbolLen:
		return "longer than " + strconv.Itoa(maxSymbolLen) + " bytes: " + quoteField(raw)
	case !printable(raw):
		for _, r := range string(raw) {
			if termtext.IsBidiControl(r) {
				return fmt.Sprintf("holds the bidi control U+%04X, which shows text in another order than it is: %s", r, quoteField(raw))
			}
		}
		return "not printable UTF-8 text: " + quoteField(raw)
	}
	return ""
}

func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || termtext.IsBidiControl(r) {
			return false
		}
	}
	return true
}

// parseNumber parses and checks the text of a price (col colOpen to
// colClose) or volume field; it returns the value or what is wrong.
func parseNumber(col int, raw []byte) (float64, string) {
	if len(raw) == 0 {
		return 0, "empty"
	}
	if f, ok := parseDecimal(raw); ok {
		if f <= 0 && col != colVolume {
			return 0, "must be > 0: " + quoteField(raw)
		}
		return f, ""
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrSyntax {
			return 0, "not a number: " + quoteField(raw)
		}
		return 0, "not a finite number: " + quoteField(raw)
	}
	if col == colVolume {
		if f < 0 {
			return 0, "must be >= 0: " + quoteField(raw)
		}
	} else if f <= 0 {
		return 0, "must be > 0: " + quoteField(raw)
	}
	return f, ""
}

// valueProblem checks a price or volume read as a number (from Parquet).
func valueProblem(col int, f float64) string {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return "not a finite number: " + fmtFloat(f)
	case col == colVolume && f < 0:
		return "must be >= 0: " + fmtFloat(f)
	case col != colVolume && f <= 0:
		return "must be > 0: " + fmtFloat(f)
	}
	return ""
}

// barProblem checks that high and low bracket open and close; it returns
// the offending column and what is wrong, or -1.
func barProblem(open, high, low, cl float64) (int, string) {
	if high < max(open, cl) {
		return colHigh, fmtFloat(high) + " is below max(open, close) " + fmtFloat(max(open, cl))
	}
	if low > min(open, cl) {
		return colLow, fmtFloat(low) + " is above min(open, close) " + fmtFloat(min(open, cl))
	}
	return -1, ""
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

// fmtFloat formats a number for messages: the shortest decimal that reads
// back to f, without an exponent.
func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
