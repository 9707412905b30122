package data

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"stratbench/internal/pqcraft"
)

// checkReplay asserts the invariants of every replay.
func checkReplay(t *testing.T, s *Set, b Bars) {
	t.Helper()
	syms := s.Symbols()
	if !slices.IsSorted(syms) || len(slices.Compact(slices.Clone(syms))) != len(syms) {
		t.Fatalf("symbol table not sorted and unique: %q", syms)
	}
	for _, name := range syms {
		if symbolProblem([]byte(name)) != "" {
			t.Fatalf("bad symbol %q", name)
		}
	}
	info := s.Info()
	if int64(b.Len()) != info.Events || b.Len() == 0 {
		t.Fatalf("%d bars, info %+v", b.Len(), info)
	}
	if b.Time[0] != info.From.UnixNano() || b.Time[b.Len()-1] != info.To.UnixNano() {
		t.Fatalf("first/last %d %d, info %+v", b.Time[0], b.Time[b.Len()-1], info)
	}
	for i := range b.Len() {
		if sym := b.Symbol[i]; sym < 0 || int(sym) >= len(syms) {
			t.Fatalf("bar %d: symbol %d", i, sym)
		}
		if i > 0 && (b.Time[i] < b.Time[i-1] || b.Time[i] == b.Time[i-1] && b.Symbol[i] <= b.Symbol[i-1]) {
			t.Fatalf("bar %d out of replay order", i)
		}
		o, h, l, c, v := b.Open[i], b.High[i], b.Low[i], b.Close[i], b.Volume[i]
		for _, f := range []float64{o, h, l, c, v} {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				t.Fatalf("bar %d: not finite", i)
			}
		}
		if o <= 0 || h <= 0 || l <= 0 || c <= 0 || v < 0 || h < max(o, c) || l > min(o, c) {
			t.Fatalf("bar %d: invalid %v %v %v %v %v", i, o, h, l, c, v)
		}
	}
}

// fuzzFile opens the file at path in both modes, with and without a
// window, and checks that each either replays a valid stream or fails
// with an *Error naming the file, and that both modes agree.
func fuzzFile(t *testing.T, path string) {
	windows := []Window{{}, {From: time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC), To: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}}
	for _, w := range windows {
		var results [2]Bars
		var fails [2]error
		for m, mode := range modes {
			s, err := Open(context.Background(), []string{path}, Options{Window: w, Budget: mode.budget})
			if err == nil {
				var b Bars
				if b, err = readAll(t, s); err == nil {
					checkReplay(t, s, b)
					results[m] = b
					if _, err = s.Digest(context.Background()); err != nil {
						t.Fatalf("digest of a replayed set: %v", err)
					}
				}
				s.Close()
			}
			var de *Error
			if err != nil && (!errors.As(err, &de) || de.File != path) {
				t.Fatalf("%s: error %T %v does not name %s", mode.name, err, err, path)
			}
			fails[m] = err
		}
		if (fails[0] == nil) != (fails[1] == nil) {
			t.Fatalf("window %v: resident %v, streamed %v", w, fails[0], fails[1])
		}
		if fails[0] == nil && !reflect.DeepEqual(results[0], results[1]) {
			t.Fatalf("window %v: resident and streamed replays differ", w)
		}
		checkParallelScan(t, path, w)
	}
}

// checkParallelScan opens the line file at path read line by line and in
// parallel, in chunks of several sizes (a line file is read in parallel
// from parallelFrom bytes), resident and streamed, and checks that both
// give the same error or the same replay, info and digest.
func checkParallelScan(t *testing.T, path string, w Window) {
	t.Helper()
	checkParallelScanIn(t, path, w, 1, 7, 100)
}

// checkParallelScanIn is checkParallelScan in chunks of the sizes given
// (0: the default).
func checkParallelScanIn(t *testing.T, path string, w Window, chunks ...int) {
	t.Helper()
	if ext := filepath.Ext(path); ext != ".csv" && ext != ".jsonl" {
		return
	}
	type outcome struct {
		err    string
		bars   Bars
		info   Info
		digest string
	}
	open := func(mode int64, tune scanTuning) outcome {
		s, err := Open(context.Background(), []string{path}, Options{Window: w, Budget: mode, scan: tune})
		if err != nil {
			return outcome{err: err.Error()}
		}
		defer s.Close()
		var o outcome
		if o.bars, err = readAll(t, s); err != nil {
			return outcome{err: "replay: " + err.Error()}
		}
		o.info = s.Info()
		if o.digest, err = s.Digest(context.Background()); err != nil {
			return outcome{err: "digest: " + err.Error()}
		}
		return o
	}
	for _, mode := range modes {
		want := open(mode.budget, scanTuning{parallelFrom: -1})
		for _, chunk := range chunks {
			got := open(mode.budget, scanTuning{parallelFrom: 1, chunk: chunk, workers: 2})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("window %v, %s, chunks of %d bytes: read in parallel\n%+v\nline by line\n%+v", w, mode.name, chunk, got, want)
			}
		}
	}
}

func fuzzLines(f *testing.F, name string, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	path := filepath.Join(f.TempDir(), name) // rewritten by each input in turn
	f.Fuzz(func(t *testing.T, in []byte) {
		if err := os.WriteFile(path, in, 0o644); err != nil {
			t.Fatal(err)
		}
		fuzzFile(t, path)
	})
}

func FuzzCSV(f *testing.F) {
	fuzzLines(f, "f.csv",
		header+"2026-01-01T00:00:00Z,X,100,101,99,100,5\n2026-01-01T00:01:00Z,Y,1,2,0.5,1,0\n2026-01-01T00:01:00Z,X,100,101,99,100,5\n",
		header+"1767225600,\"A,B\",1,2,0.5,1.5,0\n1767225600000,\"A\"\"B\",1,1,1,1,1\r\n",
		"volume,close,low,high,open,symbol,timestamp,x\n3,2,1,2,1,S,2026-01-01 00:00:00,\n",
		header+"2026-01-01T00:00:00+05:30,X,1,1,1,1,1\n2025-12-31T18:30:00Z,Y,1,1,1,1,1\n",
		header+"2026-01-01T00:03:00Z,B,1,1,1,1,1\n2026-01-01T00:04:00Z,B,1,1,1,1,1\n2026-01-01T00:00:00Z,A,1,1,1,1,1\n2026-01-01T00:03:00Z,A,1,1,1,1,1\n")
}

func FuzzJSONL(f *testing.F) {
	fuzzLines(f, "f.jsonl",
		`{"timestamp":"2026-01-01T00:00:00Z","symbol":"X","open":100,"high":101,"low":99,"close":100,"volume":5}`+"\n"+
			`{"timestamp":1767225660,"symbol":"Y","open":"1","high":2,"low":0.5,"close":1,"volume":0,"x":[1,{"a":"}"}]}`+"\n",
		`{"symbol":"X","timestamp":"2026-01-01","open":1e2,"high":1.01e2,"low":99,"close":100,"volume":0}`+"\n\n",
		`{"timestamp":"2026-01-01T00:00:00Z","symbol":"\u0041","open":1,"high":1,"low":1,"close":1,"volume":1}`,
		"\xef\xbb\xbf"+`{"timestamp":"2026-01-01T00:00:00Z","symbol":"A","open":1,"high":1,"low":1,"close":1,"volume":1}`+"\r\n \n"+
			`{"timestamp":"2026-01-01T00:00:00Z","symbol":"A","open":1,"high":1,"low":1,"close":1,"volume":1}`+"\n")
}

// TestParallelScanLongLines reads files whose lines are about as long as
// a line may be, with and without an ending, line by line and in
// parallel: both refuse the same line, or read the same bars.
func TestParallelScanLongLines(t *testing.T) {
	dir := t.TempDir()
	row := func(minute int) string { return fmt.Sprintf("2026-01-01T00:%02d:00Z,X,1,1,1,1,1", minute) }
	for _, n := range []int{maxLineBytes - 2, maxLineBytes - 1, maxLineBytes, maxLineBytes + 1} {
		for _, ending := range []string{"", "\n", "\r\n"} {
			// A long line: a row padded in a column the header adds.
			long := row(1) + "," + strings.Repeat("x", n-len(row(1))-1-len(ending)) + ending
			for k, body := range []string{long, row(0) + ",\n" + long, row(0) + ",\n" + long + "\n" + row(2) + ",\n"} {
				path := filepath.Join(dir, fmt.Sprintf("long-%d-%d-%d.csv", n, len(ending), k))
				if err := os.WriteFile(path, []byte(strings.TrimSuffix(header, "\n")+",pad\n"+body), 0o644); err != nil {
					t.Fatal(err)
				}
				checkParallelScan(t, path, Window{})
			}
		}
	}
}

// FuzzParquet mutates small Parquet files written by pyarrow in several
// layouts and types: every input either replays a valid stream or fails
// with an error naming the file (truncated, corrupt, bad values), never a
// panic or a hang.
func FuzzParquet(f *testing.F) {
	dir := f.TempDir()
	text := genCSV(genOpts{symbols: []string{"B", "A"}, steps: 12, step: time.Hour, start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), seed: 9, gaps: true})
	if err := os.WriteFile(filepath.Join(dir, "seed.csv"), []byte(text), 0o644); err != nil {
		f.Fatal(err)
	}
	jobs := []map[string]any{
		{"time": "ns", "compression": "none"},
		{"time": "ms", "symbol": "plain", "compression": "none", "row_group_size": 5},
		{"time": "int_s", "prices": "dec", "compression": "none", "page_version": "2.0"},
		{"time": "int96", "prices": "f32", "compression": "none", "encoding": "split"},
		{"time": "us", "prices": "dec_int", "order": "symbol", "row_group_size": 7, "compression": "none", "required": true},
		{"time": "ns", "compression": "snappy", "encoding": "delta", "max_rows_per_page": 4},
		{"time": "ms", "symbol": "none", "prices": "i64", "compression": "none"},
	}
	for i, job := range jobs {
		job["src"], job["out"] = "seed.csv", "seed"+strconv.Itoa(i)+".parquet"
	}
	pyarrow(f, dir, jobs)
	for _, job := range jobs {
		b, err := os.ReadFile(filepath.Join(dir, job["out"].(string)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// Files crafted byte by byte: huge RLE and delta pages, many row groups.
	f.Add(pqcraft.HugePage(3000, false))
	f.Add(pqcraft.HugePage(3000, true))
	f.Add(pqcraft.ManyGroups(5))
	path := filepath.Join(f.TempDir(), "SYM.parquet") // rewritten by each input in turn
	f.Fuzz(func(t *testing.T, in []byte) {
		if err := os.WriteFile(path, in, 0o644); err != nil {
			t.Fatal(err)
		}
		fuzzFile(t, path)
	})
}

// FuzzFeather mutates small Arrow IPC (Feather V2) files written by
// pyarrow and by freqtrade's code (LZ4 frame, zstd, uncompressed; several
// record batches; string and large string symbols; a freqtrade file
// without a symbol column): every input either replays a valid stream or
// fails with an error naming the file, never a panic, a hang or an
// allocation the file's header sized.
func FuzzFeather(f *testing.F) {
	dir := f.TempDir()
	text := genCSV(genOpts{symbols: []string{"B", "A"}, steps: 12, step: time.Hour, start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), seed: 9, gaps: true})
	if err := os.WriteFile(filepath.Join(dir, "seed.csv"), []byte(text), 0o644); err != nil {
		f.Fatal(err)
	}
	pairs := strings.ReplaceAll(strings.ReplaceAll(text, ",A,", ",A/USDT,"), ",B,", ",B/USDT,")
	if err := os.WriteFile(filepath.Join(dir, "pairs.csv"), []byte(pairs), 0o644); err != nil {
		f.Fatal(err)
	}
	jobs := []map[string]any{
		{"kind": "feather", "src": "seed.csv", "out": "0.feather", "compression": "uncompressed"},
		{"kind": "feather", "src": "seed.csv", "out": "1.feather", "compression": "lz4", "chunksize": 5, "time": "ms"},
		{"kind": "feather", "src": "seed.csv", "out": "2.feather", "compression": "zstd", "symbol": "large_string", "time": "s"},
		{"kind": "feather", "src": "seed.csv", "out": "3.feather", "compression": "uncompressed", "prices": "f32", "time": "int_ms", "chunksize": 7},
		{"kind": "freqtrade", "src": "pairs.csv", "out": "ft", "format": "feather"},
	}
	layouts(f, dir, jobs)
	seeds, _ := filepath.Glob(filepath.Join(dir, "*.feather"))
	more, _ := filepath.Glob(filepath.Join(dir, "ft", "*.feather"))
	for _, p := range append(seeds, more...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	path := filepath.Join(f.TempDir(), "A_USDT-1h.feather") // rewritten by each input in turn
	f.Fuzz(func(t *testing.T, in []byte) {
		if err := os.WriteFile(path, in, 0o644); err != nil {
			t.Fatal(err)
		}
		fuzzFile(t, path)
	})
}

// FuzzFreqtradeJSON: freqtrade's JSON arrays, plain and gzipped.
func FuzzFreqtradeJSON(f *testing.F) {
	for _, s := range []string{
		"[[1767225600000,1.5,2.0,1.0,1.75,10.0],[1767225660000,1.75,2,1.5,1.5,0]]",
		" [ [1767225600000 , 100, 101, 99, 100, 5.5e2] ]\n",
		"[[1767225600000.0,1,1,1,1,1],[1767225600000,1,1,1,1,1]]",
		"[[1767225600000,null,1,1,1,1]]",
		"[]",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte, gz bool) {
		path := filepath.Join(dir, "BTC_USDT-1m.json")
		if gz {
			var b bytes.Buffer
			w := gzip.NewWriter(&b)
			w.Write(in)
			w.Close()
			in, path = b.Bytes(), path+".gz"
		}
		if err := os.WriteFile(path, in, 0o644); err != nil {
			t.Fatal(err)
		}
		fuzzFile(t, path)
	})
}

// FuzzHivePath: a folder's name as a hive partition, and the symbol its
// value gives: never a panic; a symbol the writers percent-encode comes
// back whole; what is accepted is a symbol.
func FuzzHivePath(f *testing.F) {
	for _, s := range []string{"symbol=AAA", "symbol=BTC%2FUSDT", "year=2024", "symbol=%C3%A9%25", "symbol=50%", "=x", "symbol=",
		"symbol=__HIVE_DEFAULT_PARTITION__", "Symbol=a%3Ab", "k-e.y_1=v=w"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		key, value, ok := hivePart(name)
		if !ok {
			return
		}
		if key == "" || key+"="+value != name {
			t.Fatalf("%q: key %q value %q", name, key, value)
		}
		sym, err := partitionSymbol("p", value)
		if err != nil {
			return
		}
		if symbolProblem([]byte(sym)) != "" {
			t.Fatalf("%q: symbol %q", name, sym)
		}
		if back, err := partitionSymbol("p", url.PathEscape(sym)); err != nil || back != sym {
			t.Fatalf("%q: %q encoded and decoded is %q (%v)", name, sym, back, err)
		}
	})
}

// FuzzFreqtradeName: any file name parses as freqtrade's or not, never a
// panic; the pair of a name written back as freqtrade writes file names
// (misc.pair_to_filename) is the name's pair part, followed by its
// timeframe (a month written 1mo in any letter case).
func FuzzFreqtradeName(f *testing.F) {
	for _, s := range []string{"BTC_USDT-1m.feather", "BTC_USDT_USDT-1h-futures.feather", "BTC-PERP-1h.json.gz", "1000SHIB_USDT-1Mo.parquet",
		"a_b_c_d-15m.json", "BTC_USDT-trades.feather", "x-1m-mark.feather"} {
		f.Add(s)
	}
	toFile := strings.NewReplacer("/", "_", " ", "_", ".", "_", "@", "_", "$", "_", "+", "_", ":", "_")
	f.Fuzz(func(t *testing.T, name string) {
		n := parseFTName(name)
		if n == nil {
			return
		}
		prefix := toFile.Replace(n.pair) + "-"
		if !strings.HasPrefix(name, prefix) {
			t.Fatalf("%q: pair %q", name, n.pair)
		}
		rest := strings.ToLower(strings.TrimPrefix(name, prefix))
		if !strings.HasPrefix(rest, strings.ToLower(strings.ReplaceAll(n.timeframe, "1M", "1mo"))) && !strings.HasPrefix(rest, strings.ToLower(n.timeframe)) {
			t.Fatalf("%q: timeframe %q", name, n.timeframe)
		}
	})
}

// TestParallelScanMemory opens, read in parallel, a file of 16 MiB of
// blank lines before its header and 16 MiB more between its two bars: what
// Open allocates stays far below the file's size (a chunk keeps at most
// maxChunkLines lines, 72 bytes each however short; the header's reader
// keeps nothing of what it skipped), and it reads what the line-by-line
// scan reads.
func TestParallelScanMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "blank.csv")
	blank := strings.Repeat("\n", 16<<20)
	body := blank + header + "2026-01-01T00:00:00Z,X,1,1,1,1,1\n" + blank + "2026-01-01T00:01:00Z,X,1,1,1,1,1\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	checkParallelScanIn(t, path, Window{}, 0)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	set, err := Open(context.Background(), []string{path}, Options{scan: scanTuning{parallelFrom: 1, workers: 2}})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	set.Close()
	alloc := after.TotalAlloc - before.TotalAlloc
	if limit := uint64(16 << 20); alloc > limit {
		t.Fatalf("Open allocated %d bytes for a file of %d: want at most %d", alloc, len(body), limit)
	}
	t.Logf("Open allocated %d bytes for a file of %d", alloc, len(body))
}

// TestParallelScanLineBound reads, in the default chunks, a file whose
// stretches of blank, short and long lines make chunks end on their
// line bound (maxChunkLines) and grow back: the same as line by line,
// with a bad line at the end of the file or without one.
func TestParallelScanLineBound(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(header)
	minute := 0
	row := func(pad int) {
		fmt.Fprintf(&b, "%d,X,1,1,1,1,1%s\n", 1767225600+60*minute, strings.Repeat(" ", pad))
		minute++
	}
	for stretch := range 6 {
		b.WriteString(strings.Repeat("\n", maxChunkLines+stretch*1000+1))
		for k := range maxChunkLines + 3 {
			row(k % 3)
		}
		for range 2000 {
			row(200 + stretch)
		}
	}
	for k, tail := range []string{"", "1,X,1,1,1,1,1", "\n\n bad line\n"} {
		path := filepath.Join(dir, fmt.Sprintf("bound-%d.csv", k))
		if err := os.WriteFile(path, []byte(b.String()+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		checkParallelScanIn(t, path, Window{}, 0, 4096)
	}
}

// FuzzSplitCSV: splitCSV, which finds a line's commas and quotes eight
// bytes at a time, splits every line as a byte-by-byte split does (a
// quote anywhere sends both to splitQuoted), appending to what dst holds.
func FuzzSplitCSV(f *testing.F) {
	for _, s := range []string{"", ",", "a,b", "2026-01-02T00:00:00Z,SPY,1.5,2,-1,0.5,100",
		",,,,,,,,,", "a,b,\"c,d\",e", "x\"", "1234567,-1234567,", "\x00,\x01,\x2d,\xac\x2c\x2d", "abcdefg\"hijklmno", "abcdefgh,ijklmno\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		pre := [][]byte{[]byte("kept")}
		got, gotErr := splitCSV(line, pre)
		var want [][]byte
		var wantErr error
		if bytes.IndexByte(line, '"') >= 0 {
			want, wantErr = splitQuoted(line, [][]byte{[]byte("kept")})
		} else {
			want = [][]byte{[]byte("kept")}
			start := 0
			for i, c := range line {
				if c == ',' {
					want = append(want, line[start:i])
					start = i + 1
				}
			}
			want = append(want, line[start:])
		}
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("%q: error %v, want %v", line, gotErr, wantErr)
		}
		if gotErr == nil && !slices.EqualFunc(got, want, bytes.Equal) {
			t.Fatalf("%q: %q, want %q", line, got, want)
		}
	})
}
