package data

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"stratbench/internal/testenv"
)

// genOpts describe generated bars.
type genOpts struct {
	symbols []string
	steps   int           // timestamps
	step    time.Duration // between timestamps
	start   time.Time
	seed    uint64
	jitter  bool // nanoseconds on each timestamp
	gaps    bool // some symbols miss some timestamps
	blocks  bool // symbol after symbol instead of interleaved
}

// genCSV writes deterministic bars as CSV: a random walk per symbol with
// two-decimal prices of at least 10, the symbols of each timestamp in a
// shuffled order (the replay must not depend on it).
func genCSV(o genOpts) string {
	rng := rand.New(rand.NewPCG(o.seed, 7))
	price := make([]float64, len(o.symbols))
	for i := range price {
		price[i] = 50 + 10*float64(i)
	}
	type row struct {
		sym  int
		line string
	}
	var rows []row
	for k := range o.steps {
		ts := o.start.Add(time.Duration(k) * o.step)
		if o.jitter {
			ts = ts.Add(time.Duration(rng.IntN(1000)) * time.Nanosecond)
		}
		order := rng.Perm(len(o.symbols))
		for _, s := range order {
			if o.gaps && rng.IntN(10) == 0 {
				continue
			}
			open := price[s]
			cl := max(10, round2(open*(1+(rng.Float64()-0.5)*0.01)))
			hi := round2(max(open, cl) + float64(rng.IntN(50))/100)
			lo := max(10, round2(min(open, cl)-float64(rng.IntN(50))/100))
			vol := rng.IntN(5000)
			price[s] = cl
			stamp := ts.UTC().Format(time.RFC3339Nano)
			if o.step >= 24*time.Hour {
				stamp = ts.UTC().Format("2006-01-02")
			}
			rows = append(rows, row{s, stamp + "," + o.symbols[s] + "," + fmtFloat(open) + "," + fmtFloat(hi) + "," +
				fmtFloat(lo) + "," + fmtFloat(cl) + "," + strconv.Itoa(vol) + "\n"})
		}
	}
	if o.blocks {
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].sym < rows[j].sym })
	}
	var sb strings.Builder
	sb.WriteString(header)
	for _, r := range rows {
		sb.WriteString(r.line)
	}
	return sb.String()
}

func round2(f float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'f', 2, 64), 64)
	return v
}

// pyarrow runs the test environment's pyarrow on jobs (see
// testdata/parquet_variants.py).
func pyarrow(t testing.TB, dir string, jobs []map[string]any) {
	t.Helper()
	py := testenv.Python(t, "pyarrow")
	spec := filepath.Join(dir, "jobs.json")
	b, err := json.Marshal(jobs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spec, b, 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "parquet_variants.py"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, script, spec)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pyarrow: %v\n%s", err, out)
	}
}

// replay opens paths and replays them whole.
func replay(t testing.TB, paths []string, opts Options) (*Set, Bars) {
	t.Helper()
	s, err := Open(context.Background(), paths, opts)
	if err != nil {
		t.Fatalf("Open(%v): %v", paths, err)
	}
	t.Cleanup(func() { s.Close() })
	bars, err := readAll(t, s)
	if err != nil {
		t.Fatalf("replay of %v: %v", paths, err)
	}
	return s, bars
}

// sameReplay asserts that two sets replay the same events.
func sameReplay(t testing.TB, what string, a *Set, ab Bars, b *Set, bb Bars) {
	t.Helper()
	ia, ib := a.Info(), b.Info()
	if !reflect.DeepEqual(ia.Symbols, ib.Symbols) || ia.Events != ib.Events || !ia.From.Equal(ib.From) || !ia.To.Equal(ib.To) {
		t.Errorf("%s: info\n%+v\n%+v", what, ia, ib)
		return
	}
	if !reflect.DeepEqual(ab, bb) {
		for i := range min(ab.Len(), bb.Len()) {
			if !reflect.DeepEqual(ab.Slice(i, i+1), bb.Slice(i, i+1)) {
				t.Errorf("%s: event %d differs:\n%+v\n%+v", what, i, ab.Slice(i, i+1), bb.Slice(i, i+1))
				return
			}
		}
		t.Errorf("%s: %d and %d events", what, ab.Len(), bb.Len())
	}
}

var testStart = time.Date(2026, 1, 5, 14, 30, 0, 0, time.UTC)

// TestParquetMatchesCSV writes the same bars as Parquet in many layouts
// and types with pyarrow, and checks that each replays as the CSV of the
// same rows does: resident and streamed, whole and in windows.
func TestParquetMatchesCSV(t *testing.T) {
	dir := t.TempDir()
	syms := []string{"SPY", "QQQ", "AAPL", "MSFT"}
	minute := genOpts{symbols: syms, steps: 2000, step: time.Minute, start: testStart, seed: 1, gaps: true}
	jitter := minute
	jitter.jitter, jitter.seed = true, 2
	daily := genOpts{symbols: syms[:2], steps: 400, step: 24 * time.Hour, start: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), seed: 3}
	sources := map[string]genOpts{"minute.csv": minute, "jitter.csv": jitter, "daily.csv": daily}
	for name, o := range sources {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(genCSV(o)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type variant struct {
		name string
		src  string
		job  map[string]any
		// lossless: the file holds the CSV's values exactly, so it must
		// replay as the source CSV itself (and not only as pyarrow reads it).
		lossless bool
	}
	variants := []variant{
		{"ns-dict", "jitter.csv", map[string]any{"time": "ns"}, true},
		{"us-plain-symbols", "minute.csv", map[string]any{"time": "us", "symbol": "plain"}, true},
		{"ms-rowgroups", "minute.csv", map[string]any{"time": "ms", "row_group_size": 1000}, true},
		{"s-required-v2-zstd", "minute.csv", map[string]any{"time": "s", "required": true, "page_version": "2.0", "compression": "zstd"}, true},
		{"int-seconds", "minute.csv", map[string]any{"time": "int_s", "row_group_size": 2500}, true},
		{"int-seconds-plain", "minute.csv", map[string]any{"time": "int_s", "encoding": "plain", "symbol": "plain", "row_group_size": 3000}, true},
		{"int32-seconds", "minute.csv", map[string]any{"time": "int32_s"}, true},
		{"int-millis-uncompressed", "minute.csv", map[string]any{"time": "int_ms", "compression": "none"}, true},
		{"int96", "jitter.csv", map[string]any{"time": "int96"}, true},
		{"date", "daily.csv", map[string]any{"time": "date", "row_group_size": 100}, true},
		{"float32", "minute.csv", map[string]any{"prices": "f32", "row_group_size": 3000}, false},
		{"int64-prices", "minute.csv", map[string]any{"prices": "i64"}, false},
		{"uint64-prices", "daily.csv", map[string]any{"prices": "u64", "time": "date"}, false},
		{"decimal-flba", "minute.csv", map[string]any{"prices": "dec", "row_group_size": 4000}, true},
		{"decimal-int64", "minute.csv", map[string]any{"prices": "dec_int"}, true},
		{"decimal-38", "jitter.csv", map[string]any{"prices": "dec_big"}, true},
		{"delta-plain-small-pages", "minute.csv", map[string]any{"encoding": "delta", "max_rows_per_page": 333, "row_group_size": 2000}, true},
		{"byte-stream-split-v2", "jitter.csv", map[string]any{"encoding": "split", "page_version": "2.0"}, true},
		{"blocks-by-symbol", "minute.csv", map[string]any{"order": "symbol", "row_group_size": 1500}, true},
		{"blocks-by-symbol-page-index", "minute.csv", map[string]any{"order": "symbol", "row_group_size": 1700, "page_index": true, "max_rows_per_page": 500}, true},
		{"no-statistics", "minute.csv", map[string]any{"statistics": false, "row_group_size": 1000}, true},
	}
	var jobs []map[string]any
	for _, v := range variants {
		job := map[string]any{"src": v.src, "out": v.name + ".parquet", "expect": v.name + ".expect.csv"}
		for k, x := range v.job {
			job[k] = x
		}
		jobs = append(jobs, job)
	}
	pyarrow(t, dir, jobs)
	t.Chdir(dir)
	at := func(d time.Duration) time.Time { return testStart.Add(d) }
	windows := []Window{
		{},
		{From: at(17 * time.Hour), To: at(31*time.Hour + 30*time.Second)},
		{From: at(25 * time.Hour)},
		{To: at(3 * time.Minute)},
		{From: time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, v := range variants {
		for wi, w := range windows {
			if v.src == "daily.csv" && wi > 0 && wi < 4 || v.src != "daily.csv" && wi == 4 {
				continue
			}
			if testing.Short() && wi > 1 && wi < 4 {
				continue // the whole data and one window
			}
			for _, mode := range modes {
				what := v.name + " " + mode.name + " window " + w.String()
				opts := Options{Window: w, Budget: mode.budget}
				ps, pb := replay(t, []string{v.name + ".parquet"}, opts)
				if mode.budget < 0 && ps.Info().Resident || mode.budget == 0 && !ps.Info().Resident {
					t.Fatalf("%s: resident %v", what, ps.Info().Resident)
				}
				es, eb := replay(t, []string{v.name + ".expect.csv"}, Options{Window: w})
				sameReplay(t, what+" (pyarrow's reading)", ps, pb, es, eb)
				if v.lossless {
					cs, cb := replay(t, []string{v.src}, Options{Window: w})
					sameReplay(t, what+" (the source CSV)", ps, pb, cs, cb)
				}
			}
		}
	}
}

// TestFolders checks a folder of one Parquet file per symbol without a
// symbol column, a folder of mixed formats, and several paths: each
// replays as the CSV of the same rows.
func TestFolders(t *testing.T) {
	dir := t.TempDir()
	syms := []string{"SPY", "QQQ", "AAPL", "MSFT", "IWM"}
	all := genCSV(genOpts{symbols: syms, steps: 2000, step: time.Minute, start: testStart, seed: 4, gaps: true})
	if err := os.WriteFile(filepath.Join(dir, "all.csv"), []byte(all), 0o644); err != nil {
		t.Fatal(err)
	}
	// The rows of some symbols, as CSV, JSON Lines and Parquet files.
	lines := strings.Split(strings.TrimSuffix(all, "\n"), "\n")[1:]
	part := func(keep ...string) string {
		var sb strings.Builder
		sb.WriteString(header)
		for _, l := range lines {
			for _, k := range keep {
				if strings.Split(l, ",")[1] == k {
					sb.WriteString(l + "\n")
				}
			}
		}
		return sb.String()
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "mixed"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "mixed", "a.csv"), []byte(part("SPY", "QQQ")), 0o644))
	var jl strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(part("AAPL")), "\n")[1:] {
		f := strings.Split(l, ",")
		jl.WriteString(`{"timestamp":"` + f[0] + `","symbol":"` + f[1] + `","open":` + f[2] + `,"high":` + f[3] +
			`,"low":` + f[4] + `,"close":` + f[5] + `,"volume":` + f[6] + "}\n")
	}
	must(os.WriteFile(filepath.Join(dir, "mixed", "b.jsonl"), []byte(jl.String()), 0o644))
	must(os.WriteFile(filepath.Join(dir, "msft.csv"), []byte(part("MSFT")), 0o644))
	must(os.WriteFile(filepath.Join(dir, "rest.csv"), []byte(part("IWM")), 0o644))
	// Files a folder's listing leaves out.
	must(os.WriteFile(filepath.Join(dir, "mixed", "notes.txt"), []byte("not data"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "mixed", ".hidden.csv"), []byte("not data"), 0o644))
	must(os.MkdirAll(filepath.Join(dir, "mixed", "sub.csv"), 0o755))
	pyarrow(t, dir, []map[string]any{
		{"src": "all.csv", "out": "persymbol", "split": true, "time": "ms", "row_group_size": 700},
		{"src": "msft.csv", "out": filepath.Join("mixed", "c.parquet"), "prices": "f64", "symbol": "dict"},
	})
	t.Chdir(dir)
	for _, mode := range modes {
		for _, w := range []Window{{}, {From: testStart.Add(5 * time.Hour), To: testStart.Add(20 * time.Hour)}} {
			opts := Options{Window: w, Budget: mode.budget}
			what := mode.name + " " + w.String()
			cs, cb := replay(t, []string{"all.csv"}, Options{Window: w})
			ps, pb := replay(t, []string{"persymbol"}, opts)
			sameReplay(t, "per-symbol folder "+what, ps, pb, cs, cb)
			if info := ps.Info(); info.Files != len(syms) || info.Source != "persymbol" {
				t.Errorf("per-symbol folder: %+v", info)
			}
			ms, mb := replay(t, []string{"mixed", "rest.csv"}, opts)
			sameReplay(t, "mixed folder and a file "+what, ms, mb, cs, cb)
			// The order of the paths does not matter.
			rs, rb := replay(t, []string{"rest.csv", "mixed"}, opts)
			sameReplay(t, "paths reversed "+what, rs, rb, cs, cb)
		}
	}
	// The same file twice, and an empty folder.
	if _, err := Open(context.Background(), []string{"mixed", "mixed/a.csv"}, Options{}); err == nil ||
		err.Error() != "read bars mixed/a.csv: given twice (also as mixed/a.csv)" {
		t.Errorf("file given twice: %v", err)
	}
	must(os.MkdirAll("empty", 0o755))
	if _, err := Open(context.Background(), []string{"empty"}, Options{}); err == nil ||
		err.Error() != "read bars empty: no data files in the folder (.csv, .jsonl, .ndjson, .json, .parquet, .feather, .arrow, .json.gz)" {
		t.Errorf("empty folder: %v", err)
	}
	// A symbol in two files: its bars merge when they do not collide.
	must(os.WriteFile("x1.csv", []byte(header+"2026-01-01T00:00:00Z,X,1,1,1,1,1\n2026-01-01T00:02:00Z,X,3,3,3,3,1\n"), 0o644))
	must(os.WriteFile("x2.csv", []byte(header+"2026-01-01T00:01:00Z,X,2,2,2,2,1\n2026-01-01T00:03:00Z,X,4,4,4,4,1\n"), 0o644))
	must(os.WriteFile("x3.csv", []byte(header+"2026-01-01T00:05:00Z,Y,2,2,2,2,1\n2026-01-01T00:02:00Z,X,9,9,9,9,1\n"), 0o644))
	for _, mode := range modes {
		_, b := replay(t, []string{"x1.csv", "x2.csv"}, Options{Budget: mode.budget})
		if !reflect.DeepEqual(b.Close, []float64{1, 2, 3, 4}) {
			t.Errorf("%s: X from two files: %v", mode.name, b.Close)
		}
		s, err := Open(context.Background(), []string{"x1.csv", "x3.csv"}, Options{Budget: mode.budget})
		if err == nil {
			_, err = readAll(t, s)
			s.Close()
		}
		want := `read bars x3.csv line 3 field "timestamp": X 2026-01-01T00:02:00Z duplicates x1.csv line 3 (2026-01-01T00:02:00Z)` +
			"; each symbol's rows must be in strictly increasing time order"
		if err == nil || err.Error() != want {
			t.Errorf("%s: duplicate across files: %v", mode.name, err)
		}
	}
}

// parquetBad writes a Parquet file with pyarrow and returns the error of
// opening and replaying it.
func parquetErrors(t *testing.T, dir string, jobs map[string]map[string]any) map[string]error {
	var list []map[string]any
	for name, job := range jobs {
		j := map[string]any{"src": "good.csv", "out": name}
		for k, v := range job {
			j[k] = v
		}
		list = append(list, j)
	}
	pyarrow(t, dir, list)
	errs := map[string]error{}
	for _, mode := range modes {
		for name := range jobs {
			s, err := Open(context.Background(), []string{filepath.Join(dir, name)}, Options{Budget: mode.budget})
			if err == nil {
				_, err = readAll(t, s)
				s.Close()
			}
			if prev, ok := errs[name]; ok && (prev == nil) != (err == nil) || ok && err != nil && prev.Error() != err.Error() {
				t.Errorf("%s: resident and streamed errors differ:\n%v\n%v", name, prev, err)
			}
			errs[name] = err
		}
	}
	return errs
}

func TestParquetErrors(t *testing.T) {
	dir := t.TempDir()
	good := genCSV(genOpts{symbols: []string{"SPY", "QQQ"}, steps: 500, step: time.Minute, start: testStart, seed: 5})
	if err := os.WriteFile(filepath.Join(dir, "good.csv"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	const order = "; each symbol's rows must be in strictly increasing time order"
	errs := parquetErrors(t, dir, map[string]map[string]any{
		"nan.parquet":       {"set": [][]any{{40, "close", "nan"}}, "row_group_size": 100},
		"negative.parquet":  {"set": [][]any{{123, "low", -1.5}}},
		"volume.parquet":    {"set": [][]any{{7, "volume", -3}}},
		"high.parquet":      {"set": [][]any{{9, "high", 1}}},
		"null.parquet":      {"set": [][]any{{301, "open", "null"}}, "row_group_size": 200},
		"backwards.parquet": {"set": [][]any{{4, "timestamp", 0}}, "time": "int_s"},
		"string.parquet":    {"string_column": "close"},
		"symbolint.parquet": {"string_column": "timestamp"},
		"range.parquet":     {"set": [][]any{{3, "timestamp", 20_000_000_000_000}}, "time": "int_ms"},
	})
	// Rows are 1-based; row r of the file is index r-1 of what pyarrow wrote.
	want := map[string]string{
		"nan.parquet":       `row 41 column "close": not a finite number: NaN`,
		"negative.parquet":  `row 124 column "low": must be > 0: -1.5`,
		"volume.parquet":    `row 8 column "volume": must be >= 0: -3`,
		"high.parquet":      `row 10 column "high": 1 is below max(open, close) `,
		"null.parquet":      `row 302 column "open": null`,
		"backwards.parquet": `row 5 column "timestamp": `,
		"string.parquet":    `column "close": wrong column type BYTE_ARRAY (STRING); want a number (DOUBLE, FLOAT, INT64, INT32 or DECIMAL)`,
		"symbolint.parquet": `column "timestamp": wrong column type BYTE_ARRAY (STRING); want a TIMESTAMP, a DATE, or an integer of unix seconds or milliseconds`,
		"range.parquet":     `row 4 column "timestamp": timestamp out of range (years 1678 to 2262): 20000000000000`,
	}
	for name, w := range want {
		err := errs[name]
		var de *Error
		if err == nil || !errors.As(err, &de) || !strings.HasPrefix(err.Error(), "read bars "+filepath.Join(dir, name)+" "+w) || de.File != filepath.Join(dir, name) {
			t.Errorf("%s: %v\nwant read bars %s %s…", name, err, name, w)
		}
	}
	if err := errs["backwards.parquet"]; err == nil || !strings.HasSuffix(err.Error(), order) || !strings.Contains(err.Error(), " is before row 3 (") {
		t.Errorf("backwards: %v", err)
	}
	// A truncated file, a file that is not Parquet, an empty one.
	src, err := os.ReadFile(filepath.Join(dir, "nan.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"cut.parquet":   src[:len(src)/2],
		"short.parquet": src[:5],
		"text.parquet":  []byte(good),
		"empty.parquet": nil,
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(context.Background(), []string{p}, Options{})
		var de *Error
		if err == nil || !errors.As(err, &de) || de.File != p {
			t.Errorf("%s: %v", name, err)
			continue
		}
		want := "truncated: the file does not end with a Parquet footer (was it still being written?)"
		if name == "text.parquet" {
			want = "not a Parquet file (it does not start with PAR1)"
		}
		if de.Msg != want {
			t.Errorf("%s: %v, want %s", name, err, want)
		}
	}
}

// chunkRanges returns the byte ranges [start, end) of the column chunks of
// each row group of a Parquet file, from its footer.
func chunkRanges(t *testing.T, path string) [][][2]int64 {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	info, _ := fh.Stat()
	f, err := parquet.OpenFile(fh, info.Size())
	if err != nil {
		t.Fatal(err)
	}
	var out [][][2]int64
	for _, rg := range f.Metadata().RowGroups {
		var cs [][2]int64
		for _, c := range rg.Columns {
			off := c.MetaData.DataPageOffset
			if d := c.MetaData.DictionaryPageOffset; d > 0 && d < off {
				off = d
			}
			cs = append(cs, [2]int64{off, off + c.MetaData.TotalCompressedSize})
		}
		out = append(out, cs)
	}
	return out
}

// TestParquetSkipsRowGroups proves that a window skips the row groups
// outside it without reading them: with every other row group's pages
// overwritten with garbage, the file still replays inside the window, the
// same as the CSV, and its digest is the digest of the intact file.
func TestParquetSkipsRowGroups(t *testing.T) {
	dir := t.TempDir()
	src := genCSV(genOpts{symbols: []string{"SPY", "QQQ"}, steps: 3000, step: time.Minute, start: testStart, seed: 6})
	if err := os.WriteFile(filepath.Join(dir, "bars.csv"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// 6000 rows in row groups of 600: 300 minutes each.
	pyarrow(t, dir, []map[string]any{{"src": "bars.csv", "out": "bars.parquet", "row_group_size": 600, "compression": "none"}})
	t.Chdir(dir)
	w := Window{From: testStart.Add(900 * time.Minute), To: testStart.Add(1799 * time.Minute)} // row groups 3 to 5
	digests := map[string]string{}
	for _, mode := range modes {
		opts := Options{Window: w, Budget: mode.budget}
		s, _ := replay(t, []string{"bars.parquet"}, opts)
		d, err := s.Digest(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		digests[mode.name] = d
	}
	if digests["resident"] != digests["streamed"] {
		t.Errorf("digests differ between resident and streamed: %v", digests)
	}
	data, err := os.ReadFile("bars.parquet")
	if err != nil {
		t.Fatal(err)
	}
	for g, cols := range chunkRanges(t, "bars.parquet") {
		if g >= 3 && g <= 5 {
			continue
		}
		for _, c := range cols {
			for i := c[0]; i < c[1]; i++ {
				data[i] = 0xff
			}
		}
	}
	// The same name, in another folder: file names enter the digest.
	corrupt := filepath.Join("c", "bars.parquet")
	if err := os.MkdirAll("c", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(corrupt, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cs, cb := replay(t, []string{"bars.csv"}, Options{Window: w})
	for _, mode := range modes {
		opts := Options{Window: w, Budget: mode.budget}
		ps, pb := replay(t, []string{corrupt}, opts)
		sameReplay(t, "corrupt file, "+mode.name, ps, pb, cs, cb)
		// A digest without a replay first reads what it needs, and no more.
		fresh, err := Open(context.Background(), []string{corrupt}, opts)
		if err != nil {
			t.Fatal(err)
		}
		d, err := fresh.Digest(context.Background())
		fresh.Close()
		if err != nil || d != digests[mode.name] {
			t.Errorf("%s: digest of the corrupt file %s, %v; of the intact one %s", mode.name, d, err, digests[mode.name])
		}
	}
	// Without the window, the corrupt row groups are read, and fail.
	for _, mode := range modes {
		s, err := Open(context.Background(), []string{corrupt}, Options{Budget: mode.budget})
		if err == nil {
			_, err = readAll(t, s)
			s.Close()
		}
		var de *Error
		if err == nil || !errors.As(err, &de) || de.File != corrupt || !strings.Contains(de.Msg, "corrupt") {
			t.Errorf("%s: whole corrupt file: %v", mode.name, err)
		}
		if testing.Verbose() {
			t.Logf("%s: %v", mode.name, err)
		}
	}
}

func TestStale(t *testing.T) {
	dir := t.TempDir()
	text := genCSV(genOpts{symbols: []string{"A", "B"}, steps: 100, step: time.Minute, start: testStart, seed: 31})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "d"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "src.csv"), []byte(text), 0o644))
	pyarrow(t, dir, []map[string]any{{"src": "src.csv", "out": "d/b.parquet"}, {"src": "src.csv", "out": "other.parquet", "row_group_size": 10}})
	t.Chdir(dir)
	other := strings.NewReplacer(",A,", ",C,", ",B,", ",D,").Replace(text)
	old := time.Now().Add(-time.Hour)
	write := func(path, content string, mtime time.Time) {
		t.Helper()
		must(os.WriteFile(path+".tmp", []byte(content), 0o644))
		must(os.Chtimes(path+".tmp", mtime, mtime))
		must(os.Rename(path+".tmp", path)) // an editor's atomic save
	}
	setup := func() *Set {
		t.Helper()
		write("d/a.csv", other, old)
		must(os.Chtimes("d/b.parquet", old, old))
		os.Remove("d/c.csv")
		s, err := Open(context.Background(), []string{"d"}, Options{})
		must(err)
		t.Cleanup(func() { s.Close() })
		return s
	}
	s := setup()
	if s.Stale() {
		t.Error("unchanged data is stale")
	}
	write("d/a.csv", other, time.Now())
	if s.Stale() {
		t.Error("a file saved again with the same content is stale")
	}
	for what, change := range map[string]func(){
		"CSV changed":     func() { write("d/a.csv", strings.Replace(other, ",", ", ", 1), old) },
		"file added":      func() { write("d/c.csv", other, old) },
		"file removed":    func() { must(os.Remove("d/a.csv")) },
		"Parquet changed": func() { b, _ := os.ReadFile("other.parquet"); write("d/b.parquet", string(b), old) },
		"Parquet touched": func() { must(os.Chtimes("d/b.parquet", time.Now(), time.Now())) },
	} {
		s := setup()
		change()
		if !s.Stale() {
			t.Errorf("%s: not stale", what)
		}
	}
}

// TestSpill: a folder of more Parquet streams than are read at once is
// spilled in groups by the first stream and replays as the CSV of the same
// rows, in every window, in several streams at once; a bad value in one
// file names that file and row, and a symbol in two files of different
// groups names both.
func TestSpill(t *testing.T) {
	dir := t.TempDir()
	var syms []string
	for i := range 27 {
		syms = append(syms, fmt.Sprintf("S%02d", (i*7)%27))
	}
	text := genCSV(genOpts{symbols: syms, steps: 600, step: time.Minute, start: testStart, seed: 61, gaps: true})
	if err := os.WriteFile(filepath.Join(dir, "all.csv"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	// S00's rows, for a file of the same symbol as S00.parquet (below).
	var first strings.Builder
	first.WriteString(header)
	for _, line := range strings.Split(text, "\n")[1:] {
		if strings.Contains(line, ",S00,") {
			first.WriteString(line + "\n")
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "first.csv"), []byte(first.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	pyarrow(t, dir, []map[string]any{
		{"src": "first.csv", "out": "zz.parquet"},
		{"src": "all.csv", "out": "split", "split": true, "row_group_size": 150},
		{"src": "all.csv", "out": "blocks.parquet", "order": "symbol", "row_group_size": 500},
		{"src": "all.csv", "out": "bad", "split": true, "set": [][]any{{77, "close", "nan"}}},
	})
	t.Chdir(dir)
	at := func(d time.Duration) time.Time { return testStart.Add(d) }
	for _, w := range []Window{{}, {From: at(100 * time.Minute), To: at(333 * time.Minute)}} {
		cs, cb := replay(t, []string{"all.csv"}, Options{Window: w})
		for _, path := range []string{"split", "blocks.parquet"} {
			// A stream budget that holds a few streams at once: groups of
			// a few, in one pass; and one that holds two, in several.
			ps, pb := replay(t, []string{path}, Options{Window: w, Budget: -1, StreamBudget: 2 << 20})
			if ps.spilled == nil || len(ps.spilled.groups) < 3 || ps.spilled.passes != 1 {
				t.Fatalf("%s: not spilled in groups: %+v", path, ps.spilled)
			}
			sameReplay(t, path+" spilled "+w.String(), ps, pb, cs, cb)
			ps, pb = replay(t, []string{path}, Options{Window: w, Budget: -1, StreamBudget: ps.need() / 10})
			if ps.spilled == nil || len(ps.spilled.groups) < 2 || ps.spilled.passes < 2 {
				t.Fatalf("%s: not spilled in several passes: %+v", path, ps.spilled)
			}
			sameReplay(t, path+" spilled "+w.String(), ps, pb, cs, cb)
			// Streams of a spilled set, at once.
			done := make(chan Bars, 3)
			for range 3 {
				go func() {
					b, err := readAll(t, ps)
					if err != nil {
						t.Error(err)
					}
					done <- b
				}()
			}
			for range 3 {
				sameReplay(t, path+" spilled, concurrent "+w.String(), ps, <-done, cs, cb)
			}
		}
	}
	// Every file in a group of its own (pyarrow wrote the bad one's first
	// 600-odd rows with the NaN at row 78 of each file).
	s, err := Open(context.Background(), []string{"bad"}, Options{Budget: -1, StreamBudget: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = readAll(t, s)
	var de *Error
	if !errors.As(err, &de) || !strings.HasPrefix(de.File, "bad/") || de.Row != 78 || de.Column != "close" {
		t.Errorf("a NaN in a spilled folder: %v", err)
	}
	// One symbol in two files of different groups: the folder again, with
	// S00's rows also in zz.parquet (a symbol column), the last group.
	if err := os.MkdirAll("dup", 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir("split")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("split", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("dup", e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename("zz.parquet", filepath.Join("dup", "zz.parquet")); err != nil {
		t.Fatal(err)
	}
	d, err := Open(context.Background(), []string{"dup"}, Options{Budget: -1, StreamBudget: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = readAll(t, d)
	if !errors.As(err, &de) || de.Column != "timestamp" || !strings.Contains(err.Error(), " duplicates ") ||
		!strings.Contains(err.Error(), "dup/S00.parquet row ") || !strings.Contains(err.Error(), "dup/zz.parquet row ") {
		t.Errorf("S00 in two groups: %v", err)
	}
}
