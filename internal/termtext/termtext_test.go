package termtext

import (
	"testing"
	"unicode"
)

func TestClean(t *testing.T) {
	for _, tc := range []struct{ in, line, text string }{
		{"plain text", "plain text", "plain text"},
		{"a\tb\nc", "a    bc", "a\tb\nc"},
		{"\x1b[2J\x1b[Hcleared", "cleared", "cleared"},
		{"\x1b]0;title\x07x", "x", "x"},
		{"\x1b]52;c;cHduZWQ=\x07clip", "clip", "clip"},
		{"\x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\", "link", "link"},
		{"nul\x00bel\x07bs\x08cr\r", "nulbelbscr", "nulbelbscr"},
		{"c1 \u009b31m csi", "c1 31m csi", "c1 31m csi"},
		{"lone \x1b escape", "lone scape", "lone scape"}, // ESC SP e is an nF escape sequence
		{"bad \xff utf8", "bad \uFFFD utf8", "bad \uFFFD utf8"},
		{"ünïcödé ✓", "ünïcödé ✓", "ünïcödé ✓"},
		{"ACME\u202eLPPA \u2066x\u2069 \u200fשלום", "ACMELPPA x שלום", "ACMELPPA x שלום"},
	} {
		if got := Line(tc.in); got != tc.line {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.line)
		}
		if got := Text(tc.in); got != tc.text {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.text)
		}
	}
}

func FuzzClean(f *testing.F) {
	f.Add("\x1b[31mred\x1b[0m\n\ttab")
	f.Add("\x1b]0;t\x07\u009b\x00")
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Line(s), Text(s)} {
			for _, r := range out {
				if r != '\n' && r != '\t' && (unicode.IsControl(r) || r == 0x1b || IsBidiControl(r)) {
					t.Fatalf("control %U left in %q (from %q)", r, out, s)
				}
			}
		}
		for _, r := range Line(s) {
			if r == '\n' || r == '\t' {
				t.Fatalf("layout character %U left in Line(%q)", r, s)
			}
		}
	})
}

func TestQuoted(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"../../victim", 64, `"../../victim"`},
		{"a\x1b[2Jb\n", 64, `"a\x1b[2Jb\n"`},
		{"abcdef", 3, `"abc"…`},
		{"", 3, `""`},
	} {
		if got := Quoted(tc.in, tc.max); got != tc.want {
			t.Errorf("Quoted(%q, %d) = %s, want %s", tc.in, tc.max, got, tc.want)
		}
	}
}
