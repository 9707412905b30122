// Package termtext makes text that a strategy controls (its output, its
// exception messages, its MANIFEST) safe to write to a terminal: escape
// sequences and control characters are removed, so nothing a strategy
// prints can move the cursor, change the title, write the clipboard, hide
// text or restyle whatever reads it. Every text surface (the workbench, the
// --ci text report, status, logs, jobs) goes through it; JSON outputs keep
// the exact text, escaped as JSON does.
package termtext

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Line returns s as one safe line: escape sequences and control characters
// (newlines included) are removed and each tab becomes four spaces.
func Line(s string) string { return clean(s, false) }

// Text returns s safe to print as it is laid out: like Line, but newlines
// and tabs stay.
func Text(s string) string { return clean(s, true) }

// Quoted returns s as a Go string literal (every control character and
// invalid byte escaped: safe on one line), of its first max bytes only,
// followed by "…" when it was longer: for a value read from a record that
// may hold megabytes where a short id belongs.
func Quoted(s string, max int) string {
	if len(s) > max {
		return strconv.Quote(s[:max]) + "…"
	}
	return strconv.Quote(s)
}

func clean(s string, layout bool) string {
	if isPlain(s, layout) {
		return s
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = ansi.Strip(s)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\n' && layout:
			b.WriteByte('\n')
		case r == '\t' && layout:
			b.WriteByte('\t')
		case r == '\t':
			b.WriteString("    ")
		case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0, IsBidiControl(r):
			// C0 and C1 controls, DEL: dropped (ESC of a sequence ansi.Strip
			// did not recognise among them); and bidi controls, which
			// would show the text after them in another order than its
			// own.
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// IsBidiControl reports whether r is a Unicode bidirectional formatting
// character: the embeddings, overrides and isolates (U+202A–U+202E,
// U+2066–U+2069) that make a terminal or a page show the characters after
// them in another order than they are in (the "Trojan Source" trick:
// "ACME\u202eLPPA" shows as ACMEAPPL), and the implicit marks (U+200E,
// U+200F, U+061C). Text passes none of them to a screen, and data refuses
// them in a symbol (docs/data.md).
func IsBidiControl(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c
}

// isPlain reports whether s is printable ASCII (plus newlines and tabs when
// layout is kept), the common case that needs no work.
func isPlain(s string, layout bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f || layout && (c == '\n' || c == '\t') {
			continue
		}
		return false
	}
	return true
}
