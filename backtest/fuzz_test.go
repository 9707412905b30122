package backtest

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// checkData asserts the invariants every loaded data set has.
func checkData(t *testing.T, d *Data) {
	t.Helper()
	b := d.Bars()
	n := b.Len()
	if n == 0 {
		t.Fatal("loaded data without bars")
	}
	for _, col := range [][]float64{b.Open, b.High, b.Low, b.Close, b.Volume} {
		if len(col) != n {
			t.Fatal("columns of different lengths")
		}
	}
	if len(b.Symbol) != n {
		t.Fatal("columns of different lengths")
	}
	used := make([]bool, len(d.Symbols()))
	for i := 0; i < n; i++ {
		s := b.Symbol[i]
		if s < 0 || int(s) >= len(used) {
			t.Fatalf("row %d: symbol index %d", i, s)
		}
		used[s] = true
		if i > 0 && (b.Time[i] < b.Time[i-1] || b.Time[i] == b.Time[i-1] && s <= b.Symbol[i-1]) {
			t.Fatalf("row %d out of replay order", i)
		}
		o, h, l, c, v := b.Open[i], b.High[i], b.Low[i], b.Close[i], b.Volume[i]
		for _, f := range []float64{o, h, l, c, v} {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				t.Fatalf("row %d: non-finite value", i)
			}
		}
		if o <= 0 || h <= 0 || l <= 0 || c <= 0 || v < 0 || h < max(o, c) || l > min(o, c) {
			t.Fatalf("row %d: invalid bar %v %v %v %v %v", i, o, h, l, c, v)
		}
	}
	seen := map[string]bool{}
	for i, s := range d.Symbols() {
		if s == "" || !printable([]byte(s)) || seen[s] || !used[i] {
			t.Fatalf("bad symbol table %q", d.Symbols())
		}
		seen[s] = true
	}
}

// checkError asserts that a load error names the file.
func checkError(t *testing.T, file string, err error) {
	t.Helper()
	de, ok := err.(*DataError)
	if !ok || de.File != file || !strings.HasPrefix(de.Error(), "read bars "+file) {
		t.Fatalf("error %T %v does not name %s", err, err, file)
	}
}

func FuzzCSV(f *testing.F) {
	f.Add([]byte(oneSymbolCSV))
	f.Add([]byte(twoSymbolCSV))
	f.Add([]byte(header + "1767225600,\"A,B\",1,2,0.5,1.5,0\n1767225600000,\"A\"\"B\",1,1,1,1,1\r\n"))
	f.Add([]byte("volume,close,low,high,open,symbol,timestamp,x\n3,2,1,2,1,S,2026-01-01 00:00:00,\n"))
	f.Add([]byte(header + "2026-01-01T00:00:00+05:30,X,1,1,1,1,1\n2025-12-31T18:30:00Z,Y,1,1,1,1,1\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		d, err := parse("f.csv", bytes.NewReader(in), int64(len(in)))
		if err != nil {
			checkError(t, "f.csv", err)
			return
		}
		checkData(t, d)
	})
}

func FuzzJSONL(f *testing.F) {
	f.Add([]byte(`{"timestamp":"2026-01-01T00:00:00Z","symbol":"X","open":1,"high":2,"low":0.5,"close":1.5,"volume":0}`))
	f.Add([]byte(`{"timestamp":1767225600,"symbol":"X","open":"1","high":"2e0","low":0.5,"close":1.5,"volume":0,"x":[{"a":"}"}]}` + "\n" +
		`{"timestamp":1767225660000,"symbol":"Y","open":1,"high":2,"low":0.5,"close":1.5,"volume":0}`))
	f.Add([]byte(`{"\u0074imestamp":"2026-01-01","symbol":"\u00e9","open":1,"high":1,"low":1,"close":1,"volume":1}`))
	f.Add([]byte(`{"timestamp":1,"symbol":"X","open":-0,"high":1,"low":1,"close":1,"volume":true}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		d, err := parse("f.jsonl", bytes.NewReader(in), int64(len(in)))
		if err != nil {
			checkError(t, "f.jsonl", err)
			return
		}
		checkData(t, d)
		// Differential check against encoding/json: every line accepted is
		// valid JSON, and decodes to the same symbols and closes.
		var closes []float64
		syms := map[string]bool{}
		for _, line := range bytes.Split(in, []byte("\n")) {
			line = bytes.TrimSpace(bytes.TrimSuffix(line, []byte("\r")))
			if len(line) == 0 {
				continue
			}
			if !json.Valid(line) {
				t.Fatalf("accepted invalid JSON %q", line)
			}
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.UseNumber()
			var obj map[string]any
			if err := dec.Decode(&obj); err != nil {
				t.Fatalf("accepted %q, encoding/json says %v", line, err)
			}
			syms[obj["symbol"].(string)] = true
			var text string
			switch v := obj["close"].(type) {
			case json.Number:
				text = v.String()
			case string:
				text = v
			default:
				t.Fatalf("accepted close %v", v)
			}
			c, err := strconv.ParseFloat(text, 64)
			if err != nil {
				t.Fatalf("accepted close %q", text)
			}
			closes = append(closes, c)
		}
		got := slices.Clone(d.Bars().Close)
		slices.Sort(got)
		slices.Sort(closes)
		if !slices.Equal(got, closes) || len(syms) != len(d.Symbols()) {
			t.Fatalf("closes %v, encoding/json %v; symbols %q vs %v", got, closes, d.Symbols(), syms)
		}
		for _, s := range d.Symbols() {
			if !syms[s] {
				t.Fatalf("symbol %q not in the input", s)
			}
		}
	})
}

// strictRFC3339 is RFC 3339's date-time; time.Parse is more lenient (it
// takes a one-digit hour and zone offsets like +00:60).
var strictRFC3339 = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$`)

// FuzzParseTime checks the timestamp parser against the standard library:
// a strict RFC 3339 time that time.Parse accepts (in range) we accept, with
// the same value, and no input makes us panic.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"2026-09-30T12:00:00Z", "2026-09-30T12:00:00.5+01:00", "2026-09-30 12:00:00",
		"1790000000", "1790000000000.25", "2024-02-29", "-5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ours, err := parseTimestamp([]byte(s))
		std, stdErr := time.Parse(time.RFC3339Nano, s)
		if stdErr != nil || !strictRFC3339.MatchString(s) || std.Year() < 1678 || std.Year() > 2261 {
			return
		}
		if err != nil {
			t.Fatalf("%q: time.Parse gives %v, we fail: %v", s, std, err)
		}
		if ours != std.UnixNano() {
			t.Fatalf("%q: %d, time.Parse %d", s, ours, std.UnixNano())
		}
	})
}

// FuzzParseDecimal checks the fast decimal path against strconv.ParseFloat.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"101.25", "0.1", "123456789012345", "1234567890.12345", "1.", ".5", "007", "9007199254740993"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseDecimal([]byte(s))
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(s, 64)
		if err != nil || got != want {
			t.Fatalf("parseDecimal(%q) = %v, strconv.ParseFloat %v, %v", s, got, want, err)
		}
	})
}
