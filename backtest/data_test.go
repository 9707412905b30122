package backtest

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"stratbench/contract"
)

const header = "timestamp,symbol,open,high,low,close,volume\n"

func TestParseErrors(t *testing.T) {
	const needs = " (the header needs timestamp,symbol,open,high,low,close,volume)"
	const order = "; each symbol's rows must be in strictly increasing time order"
	const tsSyntax = `not a timestamp (want RFC 3339, "YYYY-MM-DD HH:MM:SS" in UTC, or unix seconds or milliseconds)`
	row := "2026-01-01T00:00:00Z,X,100,101,99,100,5\n"
	tests := []struct {
		file, text, want string
	}{
		{"bars.csv", "", `read bars bars.csv: empty file`},
		{"bars.csv", "\n\n", `read bars bars.csv: empty file`},
		{"bars.csv", header, `read bars bars.csv: no bars after the header`},
		{"bars.csv", header + "\n  \n", `read bars bars.csv: no bars after the header`},
		{"bars.csv", "timestamp,symbol,open,high,low,close\n" + row, `read bars bars.csv line 1 field "volume": missing column` + needs},
		{"bars.csv", "time,symbol,open,high,low,close,volume\n" + row, `read bars bars.csv line 1 field "timestamp": missing column` + needs},
		{"bars.csv", "timestamp,symbol,open,high,low,close,close,volume\n", `read bars bars.csv line 1 field "close": duplicate column`},
		{"bars.csv", `"timestamp,symbol` + "\n", `read bars bars.csv line 1: header: unterminated quoted field`},
		{"bars.csv", header + row + "2026-01-01T00:01:00Z,X,100,101,99,100\n", `read bars bars.csv line 3: 6 fields, the header has 7`},
		{"bars.csv", header + "2026-01-01T00:00:00Z,X,100,101,99,abc,5\n", `read bars bars.csv line 2 field "close": not a number: "abc"`},
		{"bars.csv", header + "2026-01-01T00:00:00Z,X,NaN,101,99,100,5\n", `read bars bars.csv line 2 field "open": not a finite number: "NaN"`},
		{"bars.csv", header + "2026-01-01T00:00:00Z,X,100,1e999,99,100,5\n", `read bars bars.csv line 2 field "high": not a finite number: "1e999"`},
		{"bars.csv", header + "2026-01-01T00:00:00Z,X,100,101,0,100,5\n", `read bars bars.csv line 2 field "low": must be > 0: "0"`},
		{"bars.csv", header + "2026-01-01T00:00:00Z,X,100,101,99,100,-5\n", `read bars bars.csv line 2 field "volume": must be >= 0: "-5"`},
		{"bars.csv", header + "2026-01-01T00:00:00Z,X,100,100.5,99,101,5\n", `read bars bars.csv line 2 field "high": 100.5 is below max(open, close) 101`},
		{"bars.csv", header + "2026-01-01T00:00:00Z,X,100,103,100.5,101,5\n", `read bars bars.csv line 2 field "low": 100.5 is above min(open, close) 100`},
		{"bars.csv", header + "2026-01-01T00:00:00Z,X,,101,99,100,5\n", `read bars bars.csv line 2 field "open": empty`},
		{"bars.csv", header + "2026-01-01T00:00:00Z,,100,101,99,100,5\n", `read bars bars.csv line 2 field "symbol": empty`},
		{"bars.csv", header + "2026-01-01T00:00:00Z,A\tB,100,101,99,100,5\n", `read bars bars.csv line 2 field "symbol": not printable UTF-8 text: "A\tB"`},
		{"bars.csv", header + "2026-01-01T00:00:00Z," + strings.Repeat("S", 65) + ",100,101,99,100,5\n",
			`read bars bars.csv line 2 field "symbol": longer than 64 bytes: "` + strings.Repeat("S", 40) + `"…`},
		{"bars.csv", header + "yesterday,X,100,101,99,100,5\n", `read bars bars.csv line 2 field "timestamp": ` + tsSyntax + `: "yesterday"`},
		{"bars.csv", header + "2026-02-30T00:00:00Z,X,100,101,99,100,5\n", `read bars bars.csv line 2 field "timestamp": invalid date 2026-02-30: "2026-02-30T00:00:00Z"`},
		{"bars.csv", header + "2026-01-01T24:00:00Z,X,100,101,99,100,5\n", `read bars bars.csv line 2 field "timestamp": invalid time of day 24:00:00: "2026-01-01T24:00:00Z"`},
		{"bars.csv", header + "1e9,X,100,101,99,100,5\n", `read bars bars.csv line 2 field "timestamp": ` + tsSyntax + `: "1e9"`},
		{"bars.csv", header + "3000-01-01T00:00:00Z,X,100,101,99,100,5\n", `read bars bars.csv line 2 field "timestamp": timestamp out of range (years 1678 to 2262): "3000-01-01T00:00:00Z"`},
		{"bars.csv", header + row + "2026-01-01T00:01:00Z,Y,100,101,99,100,5\n" + row,
			`read bars bars.csv line 4 field "timestamp": X 2026-01-01T00:00:00Z duplicates line 2 (2026-01-01T00:00:00Z)` + order},
		{"bars.csv", header + "2026-01-01T00:05:00Z,X,100,101,99,100,5\n" + row,
			`read bars bars.csv line 3 field "timestamp": X 2026-01-01T00:00:00Z is before line 2 (2026-01-01T00:05:00Z)` + order},
		{"bars.csv", header + `2026-01-01T00:00:00Z,"X,100,101,99,100,5` + "\n", `read bars bars.csv line 2: unterminated quoted field`},
		{"bars.csv", header + `2026-01-01T00:00:00Z,X"Y,100,101,99,100,5` + "\n", `read bars bars.csv line 2: bare " in an unquoted field`},
		{"bars.csv", header + `2026-01-01T00:00:00Z,"X"Y,100,101,99,100,5` + "\n", `read bars bars.csv line 2: text after a closing quote`},
		{"bars.csv", header + strings.Repeat("x", maxLineBytes+1) + "\n", `read bars bars.csv line 2: line longer than 65536 bytes`},
		{"bars.jsonl", "", `read bars bars.jsonl: no bars`},
		{"bars.jsonl", "[1,2]\n", `read bars bars.jsonl line 1: not a JSON object`},
		{"bars.jsonl", `{"timestamp": }`, `read bars bars.jsonl line 1: invalid JSON: unexpected '}' at column 15`},
		{"bars.jsonl", `{"timestamp": 1`, `read bars bars.jsonl line 1: invalid JSON: unexpected end of line`},
		{"bars.jsonl", `{"timestamp": 01}`, `read bars bars.jsonl line 1: invalid JSON: unexpected '1' at column 16`},
		{"bars.jsonl", `{} {}`, `read bars bars.jsonl line 1: invalid JSON: text after the object`},
		{"bars.jsonl", `{"timestamp":1767225600,"symbol":"X","open":100,"high":101,"low":99,"close":100}`, `read bars bars.jsonl line 1 field "volume": missing`},
		{"bars.jsonl", `{"timestamp":1767225600,"symbol":5,"open":100,"high":101,"low":99,"close":100,"volume":1}`, `read bars bars.jsonl line 1 field "symbol": must be a string, got 5`},
		{"bars.jsonl", `{"timestamp":1767225600,"symbol":"X","open":100,"high":101,"low":99,"close":null,"volume":1}`, `read bars bars.jsonl line 1 field "close": must be a number or a string, got null`},
		{"bars.jsonl", `{"timestamp":[1],"symbol":"X","open":100,"high":101,"low":99,"close":100,"volume":1}`, `read bars bars.jsonl line 1 field "timestamp": must be a number or a string, got an array`},
		{"bars.jsonl", `{"timestamp":1767225600,"symbol":"X","open":100,"open":100,"high":101,"low":99,"close":100,"volume":1}`, `read bars bars.jsonl line 1 field "open": appears twice`},
		{"bars.jsonl", `{"timestamp":1767225600,"symbol":"X","open":100,"high":101,"low":99,"close":"x","volume":1}`, `read bars bars.jsonl line 1 field "close": not a number: "x"`},
		{"bars.jsonl", "\n" + `{"timestamp":"2026-01-01","symbol":"X","open":100,"high":101,"low":99,"close":100,"volume":-1}`, `read bars bars.jsonl line 2 field "volume": must be >= 0: "-1"`},
		{"bars.jsonl", `{"timestamp":1767225600,"symbol":"X","open":100,"high":101,"low":99,"close":100,"volume":1,"extra":{"a":}}`, `read bars bars.jsonl line 1: invalid JSON: unexpected '{' at column 100`},
		// Sniffed formats.
		{"bars.txt", " {\"timestamp\": 1}", `read bars bars.txt line 1 field "symbol": missing`},
		{"bars.txt", "timestamp,symbol\n", `read bars bars.txt line 1 field "open": missing column` + needs},
	}
	for _, tc := range tests {
		_, err := parse(tc.file, strings.NewReader(tc.text), int64(len(tc.text)))
		if err == nil {
			t.Errorf("%s %q: no error, want %s", tc.file, tc.text, tc.want)
			continue
		}
		if _, ok := err.(*DataError); !ok || err.Error() != tc.want {
			t.Errorf("%s %q:\n got %T %s\nwant %s", tc.file, tc.text, err, err, tc.want)
		}
	}
}

func TestLoadFileErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.csv")
	if _, err := Load(missing); err == nil || err.Error() != "read bars "+missing+": no such file or directory" {
		t.Errorf("Load(missing) = %v", err)
	}
	if _, err := Load(dir); err == nil || err.Error() != "read bars "+dir+": is a directory" {
		t.Errorf("Load(dir) = %v", err)
	}
	if _, err := NewCache(1 << 20).Load(missing); err == nil || err.Error() != "read bars "+missing+": no such file or directory" {
		t.Errorf("Cache.Load(missing) = %v", err)
	}
}

func TestParseForms(t *testing.T) {
	// One bar per timestamp form, all of symbol X, in increasing time.
	text := "\xef\xbb\xbfTimestamp, Symbol ,OPEN,high,low,close,volume,vwap\r\n" +
		"2026-01-01,X,100,101,99,100,5,1\r\n" +
		"\r\n" +
		"2026-01-01 00:01:00,X,100,101,99,100,5,1\r\n" +
		"2026-01-01T00:02:00.5Z,\"X\",100,101,99,100,5,1\r\n" +
		"2026-01-01T01:03:00+01:00, X ,100,101,99,100,0,1\r\n" +
		"1767225840,X,1e2,101,99,100,5,1\r\n" +
		"1767225900000,X,100,101,99,100,5,1\r\n" +
		"1767225960.25,X,100,101,99,100,5,\"1,5\"\r\n"
	d := mustParse(t, "forms.csv", text)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	min := int64(time.Minute)
	want := []int64{base, base + min, base + 2*min + 5e8, base + 3*min, base + 4*min, base + 5*min, base + 6*min + 25e7}
	if got := d.Bars().Time; !reflect.DeepEqual(got, want) {
		t.Errorf("times %v, want %v", got, want)
	}
	if !reflect.DeepEqual(d.Symbols(), []string{"X"}) || d.Bars().Open[4] != 100 || d.Bars().Volume[3] != 0 {
		t.Errorf("symbols %v open %v volume %v", d.Symbols(), d.Bars().Open, d.Bars().Volume)
	}
}

func TestParseOrdersSymbols(t *testing.T) {
	// Blocks by symbol, and a tie at 00:01 where Y comes first in the file
	// but X appeared first: the replay is by time, ties in order of first
	// appearance.
	csvText := header +
		"2026-01-01T00:00:00Z,X,1,1,1,1,1\n" +
		"2026-01-01T00:02:00Z,X,3,3,3,3,1\n" +
		"2026-01-01T00:01:00Z,Y,20,20,20,20,1\n" +
		"2026-01-01T00:02:00Z,Y,30,30,30,30,1\n" +
		"2026-01-01T00:01:00Z,Z,200,200,200,200,1\n" +
		"2026-01-01T00:01:00Z,X,2,2,2,2,1\n"
	// That last X row is before X's 00:02 row: out of order within X.
	if _, err := parse("bars.csv", strings.NewReader(csvText), 0); err == nil {
		t.Fatal("out-of-order X rows accepted")
	}
	csvText = header +
		"2026-01-01T00:00:00Z,X,1,1,1,1,1\n" +
		"2026-01-01T00:01:00Z,X,2,2,2,2,1\n" +
		"2026-01-01T00:02:00Z,X,3,3,3,3,1\n" +
		"2026-01-01T00:01:00Z,Z,200,200,200,200,1\n" +
		"2026-01-01T00:00:00Z,Y,10,10,10,10,1\n" +
		"2026-01-01T00:01:00Z,Y,20,20,20,20,1\n"
	d := mustParse(t, "bars.csv", csvText)
	if !reflect.DeepEqual(d.Symbols(), []string{"X", "Z", "Y"}) {
		t.Fatalf("symbols %v", d.Symbols())
	}
	if want := []float64{1, 10, 2, 200, 20, 3}; !reflect.DeepEqual(d.Bars().Close, want) {
		t.Errorf("replay order closes %v, want %v", d.Bars().Close, want)
	}
	// The same bars as JSON Lines, with numbers as strings and numbers, and
	// keys in any order, give the same data.
	var jl strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(csvText), "\n")[1:] {
		f := strings.Split(line, ",")
		jl.WriteString(`{"volume":` + f[6] + `,"symbol":"` + f[1] + `","timestamp":"` + f[0] + `","open":"` + f[2] +
			`","high":` + f[3] + `,"low":` + f[4] + `,"close":` + f[5] + `,"note":{"nested":[1,"}"]},"\u0073ide":null}` + "\n")
	}
	dj := mustParse(t, "bars.jsonl", jl.String())
	if !reflect.DeepEqual(dj.Bars(), d.Bars()) || !reflect.DeepEqual(dj.Symbols(), d.Symbols()) {
		t.Errorf("JSONL bars differ from CSV:\n%+v\n%+v", dj.Bars(), d.Bars())
	}
}

func TestParseTime(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"2026-09-30 12:00:00", "2026-09-30T12:00:00Z"},
		{"2026-09-30T12:00:00Z", "2026-09-30T12:00:00Z"},
		{"2026-09-30t12:00:00z", "2026-09-30T12:00:00Z"},
		{"2026-09-30T14:30:00+02:30", "2026-09-30T12:00:00Z"},
		{"2026-09-30T09:00:00-03:00", "2026-09-30T12:00:00Z"},
		{"2026-09-30T12:00:00.123456789123Z", "2026-09-30T12:00:00.123456789Z"},
		{"2024-02-29", "2024-02-29T00:00:00Z"},
		{"1969-12-31T23:59:59Z", "1969-12-31T23:59:59Z"},
		{"1790000000", "2026-09-21T14:13:20Z"},
		{"1790000000000", "2026-09-21T14:13:20Z"},
		{"1790000000.5", "2026-09-21T14:13:20.5Z"},
		{"1790000000000.5", "2026-09-21T14:13:20.0005Z"},
		{"9000000000", "2255-03-14T16:00:00Z"},
		{"100000000000", "1973-03-03T09:46:40Z"},
		{"-86400", "1969-12-31T00:00:00Z"},
		{"0", "1970-01-01T00:00:00Z"},
	} {
		got, err := ParseTime(tc.in)
		if err != nil {
			t.Errorf("ParseTime(%q): %v", tc.in, err)
			continue
		}
		if s := got.Format(time.RFC3339Nano); s != tc.want {
			t.Errorf("ParseTime(%q) = %s, want %s", tc.in, s, tc.want)
		}
	}
	for _, in := range []string{"", "2026-09-30T12:00Z", "2026-13-01", "2023-02-29", "2026-09-30X12:00:00",
		"2026-09-30T12:00:00+2:00", "2026-09-30T12:00:00.Z", "12.5.3", "+", "1.", "99999999999", "-9300000000", "abc", "2026/09/30"} {
		if _, err := ParseTime(in); err == nil {
			t.Errorf("ParseTime(%q) accepted", in)
		}
	}
}

func TestParseWindow(t *testing.T) {
	w, err := ParseWindow("2026-01-01 00:01:00", "")
	if err != nil || !w.From.Equal(time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)) || !w.To.IsZero() {
		t.Errorf("ParseWindow = %+v, %v", w, err)
	}
	if _, err := ParseWindow("2026-01-02", "2026-01-01"); err == nil || err.Error() != "--to 2026-01-01 is before --from 2026-01-02" {
		t.Errorf("reversed window: %v", err)
	}
	if _, err := ParseWindow("soon", ""); err == nil || !strings.HasPrefix(err.Error(), `--from: parse time "soon": not a timestamp`) {
		t.Errorf("bad --from: %v", err)
	}
	if _, err := ParseWindow("", "later"); err == nil || !strings.HasPrefix(err.Error(), `--to: parse time "later": not a timestamp`) {
		t.Errorf("bad --to: %v", err)
	}
}

func TestWindowBounds(t *testing.T) {
	d := mustParse(t, "bars.csv", twoSymbolCSV)
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
		{Window{From: at("2026-01-01T00:03:00Z")}, 6, 6},
	} {
		if lo, hi := tc.w.rangeOf(d); lo != tc.lo || hi != tc.hi {
			t.Errorf("window %v: rows [%d, %d), want [%d, %d)", tc.w, lo, hi, tc.lo, tc.hi)
		}
	}
}

func TestCache(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bars.csv")
	write := func(text string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-time.Hour)
	write(oneSymbolCSV, old)
	c := NewCache(1 << 20)
	d1, err := c.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if d2, _ := c.Load(path); d2 != d1 {
		t.Error("unchanged file parsed again")
	}
	// Rewritten with the same content and a new time: recent, so the
	// content is compared, and the parsed data is kept.
	write(oneSymbolCSV, time.Now())
	if d3, _ := c.Load(path); d3 != d1 {
		t.Error("file with identical content parsed again")
	}
	// Changed content with the same size, just written: detected.
	changed := strings.Replace(oneSymbolCSV, "104,105,98,99", "104,105,98,98", 1)
	write(changed, time.Now())
	d4, err := c.Load(path)
	if err != nil || d4 == d1 || d4.Bars().Close[4] != 98 {
		t.Fatalf("changed file: %v, close %v", err, d4.Bars().Close)
	}
	// The same file under another name keeps the name it was asked by.
	t.Chdir(dir)
	d5, err := c.Load("bars.csv")
	if err != nil || d5.Info().Source != "bars.csv" || &d5.bars.Time[0] != &d4.bars.Time[0] {
		t.Errorf("Load(bars.csv) = %v, source %q, want the cached columns under the new name", err, d5.Info().Source)
	}
	// A broken file is an error, and a fixed one loads again.
	write(header+"bad\n", time.Now())
	if _, err := c.Load(path); err == nil {
		t.Error("broken file loaded from the cache")
	}
}

func TestCacheEvicts(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{a, b} {
		os.WriteFile(p, []byte(oneSymbolCSV), 0o644)
		os.Chtimes(p, old, old)
	}
	one := mustParse(t, "x.csv", oneSymbolCSV).sizeBytes()
	c := NewCache(one) // room for one file
	da, _ := c.Load(a)
	db, _ := c.Load(b)
	if db2, _ := c.Load(b); db2 != db {
		t.Error("most recent file evicted")
	}
	if da2, _ := c.Load(a); da2 == da {
		t.Error("least recently used file kept beyond the bound")
	}
	if len(c.entries) != 1 {
		t.Errorf("%d entries, want 1", len(c.entries))
	}
	tiny := NewCache(10)
	d1, _ := tiny.Load(a)
	if d2, _ := tiny.Load(a); d2 == d1 || len(tiny.entries) != 0 {
		t.Error("data larger than the cache was kept")
	}
}

func TestSample(t *testing.T) {
	d := Sample()
	b := d.Bars()
	if !reflect.DeepEqual(d.Symbols(), []string{"SYNA", "SYNB"}) || b.Len() != 2*7*24*60 {
		t.Fatalf("symbols %v, %d bars", d.Symbols(), b.Len())
	}
	info := d.Info()
	if info.Source != "bundled:synthetic" || info.From != "2026-01-05T00:00:00Z" || info.To != "2026-01-11T23:59:00Z" {
		t.Errorf("info %+v", info)
	}
	// Valid as loaded data would be: round-trip it through the CSV reader.
	var sb strings.Builder
	sb.WriteString(header)
	for i := range b.Time {
		sb.WriteString(formatTime(b.Time[i]) + "," + d.Symbols()[b.Symbol[i]] + "," + fmtFloat(b.Open[i]) + "," +
			fmtFloat(b.High[i]) + "," + fmtFloat(b.Low[i]) + "," + fmtFloat(b.Close[i]) + "," + fmtFloat(b.Volume[i]) + "\n")
	}
	back := mustParse(t, "sample.csv", sb.String())
	if !reflect.DeepEqual(back.Bars(), b) {
		t.Error("sample does not survive a CSV round trip")
	}
	// Pinned: the sample must not change between versions or platforms.
	if got, want := sampleDigestHex(d), "0330d67e40908bbf2df36d4388323b8ff2c07a682ee1d53816c6cb44ca79185f"; got != want {
		t.Errorf("sample digest %s, want %s", got, want)
	}
	if !reflect.DeepEqual(Sample().Bars(), b) {
		t.Error("Sample is not deterministic")
	}
}

func sampleDigestHex(d *Data) string { return hex.EncodeToString(d.digest[:]) }

var _ contract.Driver = (*Driver)(nil)
