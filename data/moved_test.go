package data

// Tests that came from the backtest package's own reader, which this
// package replaced: the assertions it made that the tests above do not.

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestOpenFileErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.csv")
	if _, err := Open(t.Context(), []string{missing}, Options{}); err == nil || err.Error() != "read bars "+missing+": no such file or directory" {
		t.Errorf("Open(missing) = %v", err)
	}
	// A folder stands for its data files: an empty one has none.
	want := "read bars " + dir + ": no data files in the folder (.csv, .jsonl, .ndjson, .json, .parquet, .feather, .arrow, .json.gz)"
	if _, err := Open(t.Context(), []string{dir}, Options{}); err == nil || err.Error() != want {
		t.Errorf("Open(empty folder) = %v, want %s", err, want)
	}
}

// twoSymbolCSV: two symbols, three minutes, interleaved.
const twoSymbolCSV = header +
	"2026-01-01T00:00:00Z,A,100,101,99,100,10\n" +
	"2026-01-01T00:00:00Z,B,50,51,49,50,10\n" +
	"2026-01-01T00:01:00Z,A,100,103,99,102,10\n" +
	"2026-01-01T00:01:00Z,B,50,51,48,49,10\n" +
	"2026-01-01T00:02:00Z,A,102,104,101,103,10\n" +
	"2026-01-01T00:02:00Z,B,49,50,47,48,10\n"

func TestWindowBounds(t *testing.T) {
	at := func(s string) time.Time { tm, _ := ParseTime(s); return tm }
	for _, tc := range []struct {
		w      Window
		lo, hi int
	}{
		{Window{}, 0, 6},
		{Window{From: at("2026-01-01T00:01:00Z")}, 2, 6},
		{Window{To: at("2026-01-01T00:01:00Z")}, 0, 4},
		{Window{From: at("2026-01-01T00:00:30Z"), To: at("2026-01-01T00:01:30Z")}, 2, 4},
		{Window{From: at("1700-01-01"), To: at("2200-01-01")}, 0, 6},
		{Window{From: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), To: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)}, 0, 6},
	} {
		for _, mode := range modes {
			_, bars, err := loadText(t, "bars.csv", twoSymbolCSV, Options{Window: tc.w, Budget: mode.budget})
			if err != nil {
				t.Fatalf("window %v: %v", tc.w, err)
			}
			_, all, _ := loadText(t, "bars.csv", twoSymbolCSV, Options{Budget: mode.budget})
			if want := all.Slice(tc.lo, tc.hi); !reflect.DeepEqual(bars, want) {
				t.Errorf("%s: window %v: bars %v, want rows [%d, %d)", mode.name, tc.w, bars.Time, tc.lo, tc.hi)
			}
		}
	}
	// A window without bars is an error naming the window and what the data covers.
	_, _, err := loadText(t, "bars.csv", twoSymbolCSV, Options{Window: Window{From: at("2026-01-01T00:03:00Z")}})
	want := "read bars bars.csv: no bars in the window 2026-01-01T00:03:00Z..-: the data covers 2026-01-01T00:00:00Z to 2026-01-01T00:02:00Z"
	if err == nil || err.Error() != want {
		t.Errorf("empty window: %v, want %s", err, want)
	}
}

func TestSample(t *testing.T) {
	s, err := Sample(Window{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := readAll(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Symbols(), []string{"SYNA", "SYNB"}) || b.Len() != 2*7*24*60 {
		t.Fatalf("symbols %v, %d bars", s.Symbols(), b.Len())
	}
	info := s.Info()
	if info.Source != "bundled:synthetic" || formatTime(info.From.UnixNano()) != "2026-01-05T00:00:00Z" ||
		formatTime(info.To.UnixNano()) != "2026-01-11T23:59:00Z" || !info.Resident {
		t.Errorf("info %+v", info)
	}
	checkReplay(t, s, b)
	// Valid as read data would be: round-trip it through the CSV reader.
	var sb strings.Builder
	sb.WriteString(header)
	for i := range b.Time {
		sb.WriteString(formatTime(b.Time[i]) + "," + s.Symbols()[b.Symbol[i]] + "," + fmtFloat(b.Open[i]) + "," +
			fmtFloat(b.High[i]) + "," + fmtFloat(b.Low[i]) + "," + fmtFloat(b.Close[i]) + "," + fmtFloat(b.Volume[i]) + "\n")
	}
	_, back, err := loadText(t, "sample.csv", sb.String(), Options{})
	if err != nil || !reflect.DeepEqual(back, b) {
		t.Errorf("sample does not survive a CSV round trip: %v", err)
	}
	// Pinned: the sample must not change between versions or platforms.
	if got, want := hex.EncodeToString(s.memDigest[:]), "0330d67e40908bbf2df36d4388323b8ff2c07a682ee1d53816c6cb44ca79185f"; got != want {
		t.Errorf("sample digest %s, want %s", got, want)
	}
	again, _ := Sample(Window{})
	if b2, _ := readAll(t, again); !reflect.DeepEqual(b2, b) {
		t.Error("Sample is not deterministic")
	}
	// A window, and a window without bars.
	w, _ := ParseWindow("2026-01-06", "2026-01-06 00:09:00")
	day, err := Sample(w)
	if err != nil || day.Info().Events != 20 {
		t.Fatalf("Sample(%v): %v, %+v", w, err, day.Info())
	}
	if d1, d2 := digestOf(t, day), digestOf(t, s); d1 == d2 {
		t.Error("a window of the sample has the whole sample's digest")
	}
	w, _ = ParseWindow("2027-01-01", "")
	if _, err := Sample(w); err == nil || !strings.Contains(err.Error(), "no bars in the window 2027-01-01T00:00:00Z..-") {
		t.Errorf("Sample(%v) = %v", w, err)
	}
}

func digestOf(t *testing.T, s *Set) string {
	t.Helper()
	d, err := s.Digest(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// FuzzJSONLDecoder checks the JSON Lines reader against encoding/json:
// every line accepted is valid JSON, and decodes to the same symbols and
// closes.
func FuzzJSONLDecoder(f *testing.F) {
	f.Add([]byte(`{"timestamp":"2026-01-01T00:00:00Z","symbol":"X","open":1,"high":2,"low":0.5,"close":1.5,"volume":0}`))
	f.Add([]byte(`{"timestamp":1767225600,"symbol":"X","open":"1","high":"2e0","low":0.5,"close":1.5,"volume":0,"x":[{"a":"}"}]}` + "\n" +
		`{"timestamp":1767225660000,"symbol":"Y","open":1,"high":2,"low":0.5,"close":1.5,"volume":0}`))
	f.Add([]byte(`{"\u0074imestamp":"2026-01-01","symbol":"\u00e9","open":1,"high":1,"low":1,"close":1,"volume":1}`))
	f.Add([]byte(`{"timestamp":1,"symbol":"X","open":-0,"high":1,"low":1,"close":1,"volume":true}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		path := filepath.Join(t.TempDir(), "f.jsonl")
		if err := os.WriteFile(path, in, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Open(t.Context(), []string{path}, Options{})
		if err != nil {
			return // fuzzFile checks the errors
		}
		defer s.Close()
		b, err := readAll(t, s)
		if err != nil {
			t.Fatal(err)
		}
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
		got := slices.Clone(b.Close)
		slices.Sort(got)
		slices.Sort(closes)
		if !slices.Equal(got, closes) || len(syms) != len(s.Symbols()) {
			t.Fatalf("closes %v, encoding/json %v; symbols %q vs %v", got, closes, s.Symbols(), syms)
		}
		for _, name := range s.Symbols() {
			if !syms[name] {
				t.Fatalf("symbol %q not in the input", name)
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
