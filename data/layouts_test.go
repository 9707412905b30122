package data

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"stratbench/internal/testenv"
)

// layouts runs data/testdata/layouts.py on jobs in dir: datasets written
// by pyarrow, pandas, polars and duckdb as people write them.
func layouts(t testing.TB, dir string, jobs []map[string]any) {
	t.Helper()
	py := testenv.Python(t, "pyarrow", "pandas", "polars", "duckdb")
	spec := filepath.Join(dir, "layouts.json")
	b, err := json.Marshal(jobs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spec, b, 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "layouts.py"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, script, spec)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("layouts.py: %v\n%s", err, out)
	}
}

// symbolRows returns the CSV text with only the rows of the symbols keep.
func symbolRows(text string, keep ...string) string {
	var sb strings.Builder
	sb.WriteString(header)
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n")[1:] {
		if slices.Contains(keep, strings.Split(l, ",")[1]) {
			sb.WriteString(l + "\n")
		}
	}
	return sb.String()
}

func writeText(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sameAsCSV replays paths and the CSV file in every mode and window and
// checks that they replay the same events.
func sameAsCSV(t *testing.T, what string, paths []string, csvPath string, opts Options, windows []Window) {
	t.Helper()
	for _, mode := range modes {
		for _, w := range windows {
			o := opts
			o.Window, o.Budget = w, mode.budget
			s, b := replay(t, paths, o)
			cs, cb := replay(t, []string{csvPath}, Options{Window: w})
			sameReplay(t, what+" "+mode.name+" "+w.String(), s, b, cs, cb)
		}
	}
}

// TestHiveMatchesCSV writes hive-partitioned datasets with pyarrow,
// pandas, duckdb and polars, partitioned by symbol and by time keys in
// either order, and checks that each folder replays as the CSV of the same
// rows; a partition folder or file given directly takes its symbol from
// its folder. (Before partitions were walked, each top folder was "no data
// files in the folder", and a leaf folder replayed with the symbol
// "part-0".)
func TestHiveMatchesCSV(t *testing.T) {
	dir := t.TempDir()
	// Symbols the writers percent-encode in a folder name.
	syms := []string{"SPY", "BTC/USDT", "X=Y", "A B"}
	text := genCSV(genOpts{symbols: syms, steps: 1500, step: 8 * time.Hour, start: time.Date(2025, 5, 3, 14, 30, 0, 0, time.UTC), seed: 31, gaps: true})
	writeText(t, filepath.Join(dir, "bars.csv"), text)
	writeText(t, filepath.Join(dir, "btc.csv"), symbolRows(text, "BTC/USDT"))
	datasets := []struct {
		writer string
		keys   []string
	}{
		{"pyarrow", []string{"symbol"}},
		{"pandas", []string{"symbol"}},
		{"duckdb", []string{"symbol"}},
		{"polars", []string{"symbol"}}, // polars keeps the symbol column in the files too
		{"pyarrow", []string{"year", "symbol"}},
		{"pandas", []string{"symbol", "month"}},
		{"duckdb", []string{"year", "month", "symbol"}},
		{"polars", []string{"symbol", "year"}},
	}
	var jobs []map[string]any
	name := func(i int) string { return datasets[i].writer + "-" + strings.Join(datasets[i].keys, "-") }
	for i, d := range datasets {
		jobs = append(jobs, map[string]any{"kind": "hive", "src": "bars.csv", "out": name(i), "writer": d.writer, "keys": d.keys})
	}
	layouts(t, dir, jobs)
	t.Chdir(dir)
	windows := []Window{{}, {From: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC)}}
	for i, d := range datasets {
		// duckdb's partitioned writes do not keep the rows' order (not
		// even with ORDER BY, on one thread: measured with duckdb 2.0.1);
		// a run refuses such files, saying so, and data convert sorts
		// them.
		_, err := Open(context.Background(), []string{name(i)}, Options{})
		if d.writer == "duckdb" && err != nil && strings.Contains(err.Error(), "duckdb wrote this file, whose PARTITION_BY does not keep the rows' order") {
			sorted := name(i) + ".parquet"
			if _, err := Convert(context.Background(), []string{name(i)}, Options{}, sorted); err != nil {
				t.Fatalf("convert %s: %v", name(i), err)
			}
			sameAsCSV(t, name(i)+" converted", []string{sorted}, "bars.csv", Options{}, windows)
			continue
		}
		sameAsCSV(t, name(i), []string{name(i)}, "bars.csv", Options{}, windows)
	}
	// A leaf folder, and a file in it, given directly.
	leaf := filepath.Join("pyarrow-symbol", "symbol=BTC%2FUSDT")
	sameAsCSV(t, "leaf folder", []string{leaf}, "btc.csv", Options{}, windows)
	files, err := filepath.Glob(filepath.Join("pandas-symbol", "symbol=BTC%2FUSDT", "*.parquet"))
	if err != nil || len(files) != 1 {
		t.Fatalf("pandas' BTC/USDT partition: %v %v", files, err)
	}
	sameAsCSV(t, "a partition's file", files, "btc.csv", Options{}, windows[:1])
	// A time partition given directly: its symbols below it.
	y2026 := Window{From: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC)}
	s, b := replay(t, []string{filepath.Join("pyarrow-year-symbol", "year=2026")}, Options{})
	cs, cb := replay(t, []string{"bars.csv"}, Options{Window: y2026})
	sameReplay(t, "year=2026", s, b, cs, cb)
	// The digest names the partition: the same bytes under another
	// symbol are other data.
	s1, _ := replay(t, []string{leaf}, Options{})
	d1, err := s1.Digest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(leaf, filepath.Join("pyarrow-symbol", "symbol=ETH%2FUSDT")); err != nil {
		t.Fatal(err)
	}
	s2, b2 := replay(t, []string{filepath.Join("pyarrow-symbol", "symbol=ETH%2FUSDT")}, Options{})
	d2, err := s2.Digest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d1 == d2 || !reflect.DeepEqual(s2.Symbols(), []string{"ETH/USDT"}) || b2.Len() == 0 {
		t.Errorf("renamed partition: digest %s and %s, symbols %q", d1[:8], d2[:8], s2.Symbols())
	}
}

// TestHiveRefusals: what is not a hive dataset stratbench can read is
// refused with an error naming the file or folder and what was found, and
// the walk is bounded: no symbolic link out of the folder, no FIFO or
// device, no deeper than 16 partition levels, no more than 10,000 files.
func TestHiveRefusals(t *testing.T) {
	dir := t.TempDir()
	text := genCSV(genOpts{symbols: []string{"SPY", "QQQ"}, steps: 50, step: time.Minute, start: testStart, seed: 32})
	writeText(t, filepath.Join(dir, "bars.csv"), text)
	writeText(t, filepath.Join(dir, "spy.csv"), symbolRows(text, "SPY"))
	pyarrow(t, dir, []map[string]any{{"src": "bars.csv", "out": "split", "split": true}})
	t.Chdir(dir)
	link := func(target, name string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	copyFile := func(from, to string) {
		t.Helper()
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		writeText(t, to, string(b))
	}
	copyFile("split/SPY.parquet", "nosym/date=2026-01-05/part-0.parquet")
	copyFile("spy.csv", "other/sub/bars.csv")
	copyFile("spy.csv", "wrong/symbol=QQQ/part-0.csv")
	copyFile("split/SPY.parquet", "null/symbol=__HIVE_DEFAULT_PARTITION__/part-0.parquet")
	copyFile("split/SPY.parquet", "pct/symbol=50%/part-0.parquet")
	copyFile("split/SPY.parquet", "twice/symbol=A/symbol=B/part-0.parquet")
	copyFile("split/SPY.parquet", "outside/SPY.parquet")
	link("../../outside/SPY.parquet", "links/symbol=SPY/part-0.parquet")
	copyFile("split/SPY.parquet", "inside/store/SPY.parquet")
	link("../store/SPY.parquet", "inside/symbol=SPY/part-0.parquet")
	link("nowhere.parquet", "dangling/symbol=SPY/part-0.parquet")
	if err := os.MkdirAll("fifo", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo("fifo/bars.csv", 0o644); err != nil {
		t.Fatal(err)
	}
	deep := "deep"
	for i := range 17 {
		deep = filepath.Join(deep, "k"+string(rune('a'+i))+"=1")
	}
	copyFile("split/SPY.parquet", filepath.Join(deep, "symbol=SPY", "part-0.parquet"))
	if err := os.MkdirAll("many/symbol=SPY", 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range maxDataFiles + 1 {
		if err := os.WriteFile(filepath.Join("many/symbol=SPY", "p"+itoa64(int64(i))+".csv"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{"nosym", `read bars nosym/date=2026-01-05/part-0.parquet column "symbol": missing column, and no folder it lies in is a symbol partition (symbol=VALUE)`},
		{"other", `read bars other: no data files in the folder (.csv, .jsonl, .ndjson, .json, .parquet, .feather, .arrow, .json.gz); it holds sub/, which is no partition folder (key=value, as pyarrow, pandas, polars and duckdb write them)`},
		{"wrong", `read bars wrong/symbol=QQQ/part-0.csv field "symbol": holds bars of "SPY" in the folder of symbol "QQQ"`},
		{"null", `read bars null/symbol=__HIVE_DEFAULT_PARTITION__: the partition of rows without a symbol (null)`},
		{"pct", `read bars pct/symbol=50%: the symbol is not percent-encoded as the writers encode it: "50%"`},
		{"twice", `read bars twice/symbol=A/symbol=B: a symbol partition inside another (symbol=A)`},
		{"links", `read bars links/symbol=SPY/part-0.parquet: a symbolic link out of the folder (to ` + filepath.Join(dir, "outside", "SPY.parquet") + `): not followed; give the file itself`},
		{"dangling", `read bars dangling/symbol=SPY/part-0.parquet: a symbolic link that leads nowhere`},
		{"fifo", `read bars fifo/bars.csv: is a named pipe (FIFO), not a regular file: data is read from files and folders`},
		{"fifo/bars.csv", `read bars fifo/bars.csv: is a named pipe (FIFO), not a regular file: data is read from files and folders`},
		{"deep", `read bars ` + filepath.Join("deep", "ka=1", "kb=1", "kc=1", "kd=1", "ke=1", "kf=1", "kg=1", "kh=1", "ki=1", "kj=1", "kk=1", "kl=1", "km=1", "kn=1", "ko=1", "kp=1", "kq=1") + `: partition folders nested deeper than 16`},
		{"many", `read bars many/symbol=SPY/p9999.csv: more than 10000 data files: give fewer, or larger ones (stratbench data convert merges files into one)`},
	} {
		_, err := Open(context.Background(), []string{tc.path}, Options{})
		var de *Error
		if err == nil || err.Error() != tc.want || !errors.As(err, &de) {
			t.Errorf("%s:\n got %v\nwant %s", tc.path, err, tc.want)
		}
	}
	// A symbolic link that stays in the folder is followed.
	s, b := replay(t, []string{"inside"}, Options{})
	cs, cb := replay(t, []string{"spy.csv"}, Options{})
	sameReplay(t, "a link inside the folder", s, b, cs, cb)
}

// TestFreqtradeMatchesCSV writes freqtrade's data folders with freqtrade's
// own storing code (layouts.py: to_feather with lz4 at level 9,
// to_parquet, to_json(orient="values") and gzipped), spot and futures,
// and checks that each replays as the CSV of the same rows, the pair from
// the file name as symbol and date as time. A folder of several
// timeframes needs Options.Timeframe. (Before, the folder had no data
// files, the Feather and JSON files were read as CSV and JSON Lines, and
// the Parquet files lacked their timestamp column.)
func TestFreqtradeMatchesCSV(t *testing.T) {
	dir := t.TempDir()
	spot := genCSV(genOpts{symbols: []string{"BTC/USDT", "ETH/USDT", "1000SHIB/USDT"}, steps: 3000, step: time.Minute, start: testStart, seed: 33, gaps: true})
	futures := genCSV(genOpts{symbols: []string{"BTC/USDT:USDT", "ETH/USDT:USDT"}, steps: 2000, step: time.Minute, start: testStart, seed: 34})
	writeText(t, filepath.Join(dir, "spot.csv"), spot)
	writeText(t, filepath.Join(dir, "futures.csv"), futures)
	writeText(t, filepath.Join(dir, "btc.csv"), symbolRows(spot, "BTC/USDT"))
	var jobs []map[string]any
	formats := []string{"feather", "parquet", "json", "jsongz"}
	for _, f := range formats {
		jobs = append(jobs, map[string]any{"kind": "freqtrade", "src": "spot.csv", "out": f, "format": f})
	}
	jobs = append(jobs,
		map[string]any{"kind": "freqtrade", "src": "futures.csv", "out": "binance", "format": "feather", "futures": true},
		map[string]any{"kind": "freqtrade", "src": "spot.csv", "out": "multi", "format": "feather", "timeframe": "1m"},
		map[string]any{"kind": "freqtrade", "src": "spot.csv", "out": "multi", "format": "feather", "timeframe": "5m"},
		map[string]any{"kind": "freqtrade", "src": "spot.csv", "out": "multi", "format": "json", "timeframe": "1h"})
	layouts(t, dir, jobs)
	t.Chdir(dir)
	windows := []Window{{}, {From: testStart.Add(10 * time.Hour), To: testStart.Add(30 * time.Hour)}}
	for _, f := range formats {
		sameAsCSV(t, f, []string{f}, "spot.csv", Options{}, windows)
	}
	ext := map[string]string{"feather": "feather", "parquet": "parquet", "json": "json", "jsongz": "json.gz"}
	for _, f := range formats {
		sameAsCSV(t, f+" file", []string{filepath.Join(f, "BTC_USDT-1m."+ext[f])}, "btc.csv", Options{}, windows)
	}
	// Futures: freqtrade's futures/ folder, its files' pairs with their
	// settlement currency. A mark price file beside them is a series of
	// its own: left out of the folder, read when given.
	b, err := os.ReadFile("binance/futures/BTC_USDT_USDT-1m-futures.feather")
	if err != nil {
		t.Fatal(err)
	}
	writeText(t, "binance/futures/BTC_USDT_USDT-1m-mark.feather", string(b))
	sameAsCSV(t, "futures", []string{"binance/futures"}, "futures.csv", Options{}, windows)
	s, _ := replay(t, []string{"binance/futures/BTC_USDT_USDT-1m-mark.feather"}, Options{})
	if !reflect.DeepEqual(s.Symbols(), []string{"BTC/USDT:USDT"}) {
		t.Errorf("mark file: symbols %q", s.Symbols())
	}
	if _, err := Open(context.Background(), []string{"binance"}, Options{}); err == nil || !strings.Contains(err.Error(), "it holds futures/, which is no partition folder") {
		t.Errorf("exchange folder of futures data only: %v", err)
	}
	// Several timeframes: one must be chosen.
	optErr := func(opts Options, paths ...string) string {
		t.Helper()
		_, err := Open(context.Background(), paths, opts)
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Option != OptionTimeframe {
			t.Fatalf("%v %+v: %v, want an *OptionError", paths, opts, err)
		}
		return err.Error()
	}
	if got := optErr(Options{}, "multi"); got != "read bars: multi holds candles of 3 timeframes (1m, 5m, 1h): choose one" {
		t.Errorf("several timeframes: %s", got)
	}
	if got := optErr(Options{Timeframe: "1d"}, "multi"); got != "read bars: multi holds no 1d candles (it holds 1m, 5m, 1h)" {
		t.Errorf("a timeframe not there: %s", got)
	}
	if got := optErr(Options{Timeframe: "1m"}, "multi/BTC_USDT-5m.feather"); got != "read bars: multi/BTC_USDT-5m.feather holds 5m candles, not 1m" {
		t.Errorf("a file of another timeframe: %s", got)
	}
	if got := optErr(Options{Timeframe: "1m"}, "spot.csv"); !strings.HasPrefix(got, "read bars: a timeframe chooses among freqtrade's files") {
		t.Errorf("a timeframe without freqtrade files: %s", got)
	}
	for _, tf := range []string{"5m", "1h"} {
		sameAsCSV(t, "timeframe "+tf, []string{"multi"}, "spot.csv", Options{Timeframe: tf}, windows[:1])
	}
}

// TestFeatherMatchesCSV writes Arrow IPC (Feather V2) files with pyarrow:
// every compression (LZ4 frame, zstd, none), time units, string types,
// record batches of a few hundred rows; each replays as the CSV of the
// same rows. A stream skips the record batches outside the window, which
// the scan found.
func TestFeatherMatchesCSV(t *testing.T) {
	dir := t.TempDir()
	syms := []string{"SPY", "QQQ", "AAPL"}
	minute := genOpts{symbols: syms, steps: 2000, step: time.Minute, start: testStart, seed: 35, gaps: true}
	jitter := minute
	jitter.jitter, jitter.seed = true, 36
	daily := genOpts{symbols: syms[:2], steps: 300, step: 24 * time.Hour, start: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), seed: 37}
	minuteText := genCSV(minute)
	writeText(t, filepath.Join(dir, "minute.csv"), minuteText)
	writeText(t, filepath.Join(dir, "jitter.csv"), genCSV(jitter))
	writeText(t, filepath.Join(dir, "daily.csv"), genCSV(daily))
	writeText(t, filepath.Join(dir, "spy.csv"), symbolRows(minuteText, "SPY"))
	variants := []struct {
		name, src string
		job       map[string]any
	}{
		{"lz4-ns", "jitter.csv", map[string]any{"compression": "lz4", "time": "ns", "chunksize": 700}},
		{"zstd-us-large-strings", "minute.csv", map[string]any{"compression": "zstd", "time": "us", "symbol": "large_string", "chunksize": 1000}},
		{"uncompressed-ms", "minute.csv", map[string]any{"compression": "uncompressed", "time": "ms"}},
		{"seconds", "minute.csv", map[string]any{"time": "s", "chunksize": 333}},
		{"int-millis", "minute.csv", map[string]any{"time": "int_ms", "compression": "zstd"}},
		{"date", "daily.csv", map[string]any{"time": "date", "chunksize": 100}},
	}
	var jobs []map[string]any
	for _, v := range variants {
		job := map[string]any{"kind": "feather", "src": v.src, "out": v.name + ".feather"}
		for k, x := range v.job {
			job[k] = x
		}
		jobs = append(jobs, job)
	}
	jobs = append(jobs,
		map[string]any{"kind": "feather", "src": "spy.csv", "out": "SPY.feather", "symbol": "none", "chunksize": 500},
		map[string]any{"kind": "feather", "src": "minute.csv", "out": "category.feather", "symbol": "category"},
		map[string]any{"kind": "feather", "src": "minute.csv", "out": "float32.feather", "prices": "f32"})
	layouts(t, dir, jobs)
	t.Chdir(dir)
	for _, v := range variants {
		windows := []Window{{}, {From: testStart.Add(5 * time.Hour), To: testStart.Add(20 * time.Hour)}, {From: testStart.Add(30 * time.Hour)}}
		if v.src == "daily.csv" {
			windows = []Window{{}, {From: time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)}}
		}
		sameAsCSV(t, v.name, []string{v.name + ".feather"}, v.src, Options{}, windows)
	}
	sameAsCSV(t, "no symbol column", []string{"SPY.feather"}, "spy.csv", Options{}, []Window{{}})
	// The stream of a window skips the batches before it and after it.
	win := Window{From: testStart.Add(5 * time.Hour), To: testStart.Add(6 * time.Hour)}
	s, _ := replay(t, []string{"lz4-ns.feather"}, Options{Window: win, Budget: -1})
	ff := s.srcs[0].tbl.(*featherFile)
	used := 0
	for _, bt := range ff.batches {
		if bt.used {
			used++
		}
	}
	if len(ff.batches) < 5 || used == 0 || used > 2 {
		t.Errorf("window of an hour: %d of %d record batches read", used, len(ff.batches))
	}
	// float32 prices read as pyarrow reads them; a dictionary symbol is
	// refused, saying what to write instead.
	fs, _ := replay(t, []string{"float32.feather"}, Options{})
	if ms, _ := replay(t, []string{"minute.csv"}, Options{}); fs.Info().Events != ms.Info().Events {
		t.Errorf("float32: %d bars, the CSV %d", fs.Info().Events, ms.Info().Events)
	}
	_, err := Open(context.Background(), []string{"category.feather"}, Options{})
	if want := `read bars category.feather column "symbol": wrong column type dictionary of utf8; want a string (utf8)`; err == nil || err.Error() != want {
		t.Errorf("dictionary symbol:\n got %v\nwant %s", err, want)
	}
}

// TestNautilusCatalog reads a catalog nautilus_trader 1.221.0 wrote
// (testdata/nautilus, see write_catalog.py there): the catalog, its bar
// folder, one bar type's folder and one file replay as the CSV of the
// same bars (their fixed-point prices exactly: 1234.56 × 10^16 does not
// fit 64 bits), instrument_id as symbol and ts_event as time; an
// instrument with bars of two bar types is refused. (Before, a bar file
// was refused: `column "open": wrong column type FIXED_LEN_BYTE_ARRAY`.)
func TestNautilusCatalog(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join("testdata", "nautilus")
	csvText, err := os.ReadFile(filepath.Join(base, "catalog.csv"))
	if err != nil {
		t.Fatal(err)
	}
	audCSV := filepath.Join(dir, "aud.csv")
	writeText(t, audCSV, symbolRows(string(csvText), "AUD/USD.SIM"))
	first := filepath.Join(dir, "first.csv")
	lines := strings.Split(symbolRows(string(csvText), "AUD/USD.SIM"), "\n")
	writeText(t, first, strings.Join(lines[:1+120], "\n")+"\n")
	cat := filepath.Join(base, "catalog")
	bars := filepath.Join(cat, "data", "bar")
	aud := filepath.Join(bars, "AUDUSD.SIM-1-MINUTE-BID-EXTERNAL")
	windows := []Window{{}, {From: time.Date(2026, 1, 5, 16, 0, 0, 0, time.UTC), To: time.Date(2026, 1, 5, 17, 0, 0, 0, time.UTC)}}
	for _, p := range []string{cat, bars} {
		sameAsCSV(t, p, []string{p}, filepath.Join(base, "catalog.csv"), Options{}, windows)
	}
	sameAsCSV(t, "bar type folder", []string{aud}, audCSV, Options{}, windows)
	files, err := filepath.Glob(filepath.Join(aud, "*.parquet"))
	if err != nil || len(files) != 2 {
		t.Fatalf("bar files: %v %v", files, err)
	}
	sameAsCSV(t, "bar file", files[:1], first, Options{}, windows)
	_, err = Open(context.Background(), []string{filepath.Join(base, "two_types")}, Options{})
	if err == nil || !strings.Contains(err.Error(), "bars of AUD/USD.SIM of two bar types, AUD/USD.SIM-1-MINUTE-ASK-EXTERNAL (") ||
		!strings.HasSuffix(err.Error(), ") and AUD/USD.SIM-1-MINUTE-BID-EXTERNAL: give the folder of one") {
		t.Errorf("two bar types: %v", err)
	}
}

// TestDuckDBOrderHint: a Parquet file duckdb wrote with its rows out of
// order (its partitioned writes on several threads) is refused like any,
// and the error says how to write it in order.
func TestDuckDBOrderHint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data_0.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[pqBar](f, parquet.CreatedBy("DuckDB", "v2.0.1", "8d78114e90"))
	at := func(m int) int64 { return testStart.Add(time.Duration(m) * time.Minute).UnixNano() }
	if _, err := w.Write([]pqBar{{at(2), "A", 1, 1, 1, 1, 1}, {at(3), "A", 1, 1, 1, 1, 1}, {at(0), "A", 1, 1, 1, 1, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = Open(context.Background(), []string{path}, Options{})
	if err == nil || !strings.HasSuffix(err.Error(), "each symbol's rows must be in strictly increasing time order"+
		" (duckdb wrote this file, whose PARTITION_BY does not keep the rows' order: stratbench data convert sorts them into one file)") {
		t.Errorf("out of order: %v", err)
	}
	// data convert sorts it.
	out := filepath.Join(t.TempDir(), "sorted.parquet")
	if _, err := Convert(context.Background(), []string{path}, Options{}, out); err != nil {
		t.Fatal(err)
	}
	_, b := replay(t, []string{out}, Options{})
	if !reflect.DeepEqual(b.Time, []int64{at(0), at(2), at(3)}) {
		t.Errorf("converted: %v", b.Time)
	}
}

// TestConvertNamesBothRows: sorting a file's rows, data convert still
// refuses two rows of a symbol at one time, naming both (it named the
// first "line 0" when the file was the only one and fit the budget).
func TestConvertNamesBothRows(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dup.csv")
	rows := header + "2026-01-01T00:02:00Z,A,1,1,1,1,1\n2026-01-01T00:00:00Z,A,1,1,1,1,1\n2026-01-01T00:02:00Z,A,1,1,1,1,1\n"
	if err := os.WriteFile(path, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range modes {
		_, err := Convert(context.Background(), []string{path}, Options{Budget: mode.budget}, filepath.Join(dir, "out.parquet"))
		var de *Error
		if !errors.As(err, &de) || de.File != path || de.Column != "timestamp" || de.Line != 2 && de.Line != 4 ||
			!strings.Contains(err.Error(), fmt.Sprintf("duplicates line %d ", 6-de.Line)) {
			t.Errorf("%s: %v (line %d)", mode.name, err, de.Line)
		}
	}
}

// TestFreqtradeNames parses file names as freqtrade's data handlers do:
// its own regular expressions, run by Python, are the oracle
// (idatahandler.py: _OHLCV_REGEX, rebuild_pair_from_filename,
// rebuild_timeframe_from_filename).
func TestFreqtradeNames(t *testing.T) {
	names := []string{
		"BTC_USDT-1m.feather", "BTC_USDT-5m.parquet", "BTC_USDT-1h.json", "BTC_USDT-1d.json.gz",
		"BTC_USDT_USDT-1h-futures.feather", "BTC_USDT_USDT-8h-funding_rate.feather", "BTC_USDT_USDT-1h-mark.feather",
		"ETH_BTC_USDT-1h-premiumIndex.feather", "1000SHIB_USDT-1m.feather", "BTC-PERP-1h.feather", "BTC-PERP_USD-1h.feather",
		"ABCDEFGHIJK_USDT-1m.feather", "AB-CDEFG_USDT-1m.feather", "UNITEDSTATES_USD-1Mo.feather", "BTC_USDT-1mo.feather",
		"BTC_USDT-trades.feather", "BTC_USDT-1m-spot.feather", "BTC_USDT.feather", "SPY.parquet", "SPY-1d.parquet",
		"BTC_USDT-1m.csv", "BTC_USDT-1m.feather.bak", "-1m.feather", "BTC_USDT-1m-.feather", "a_b_c_d-15m.parquet",
		"BTC_USDT-١m.feather", "X_Y-10m-index.json.gz", "BTC USDT-1m.feather",
	}
	const oracle = `
import json, re, sys
OHLCV = r"^([a-zA-Z_\d-]+)\-(\d+[a-zA-Z]{1,2})\-?([a-zA-Z_]*)?(?=\.)"
CANDLES = ["", "futures", "mark", "index", "premiumIndex", "funding_rate"]
EXTS = (".feather", ".parquet", ".json", ".json.gz")
def pair(p):
    res = re.sub(r"^(([A-Za-z\d]{1,10})|^([A-Za-z\-]{1,6}))(_)", r"\g<1>/", p, count=1)
    return re.sub("_", ":", res, count=1)
out = []
for name in json.load(sys.stdin):
    m = re.search(OHLCV, name)
    # freqtrade globs *.EXT of its format, and CandleType refuses others.
    if not m or len(m.groups()) < 2 or m[3] not in CANDLES or name[m.end():] not in EXTS:
        out.append(None)
        continue
    out.append([pair(m[1]), re.sub("1mo", "1M", m[2], flags=re.IGNORECASE), m[3]])
json.dump(out, sys.stdout)
`
	cmd := exec.Command(testenv.Python(t), "-c", oracle)
	in, _ := json.Marshal(names)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	var want [][]string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	for i, name := range names {
		var got []string
		if n := parseFTName(name); n != nil {
			got = []string{n.pair, n.timeframe, n.candle}
		}
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("%s: %q, freqtrade %q", name, got, want[i])
		}
	}
}

// TestFixedLE converts Nautilus fixed-point values to the float64 nearest
// to them, the exact quotient rounded once (big.Rat is the oracle).
func TestFixedLE(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		width := []int{8, 16}[rng.IntN(2)]
		scale := ntScale(width)
		unsigned := rng.IntN(2) == 0
		b := make([]byte, width)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		if rng.IntN(3) == 0 { // small values, the common case
			for i := 6 + rng.IntN(2); i < width; i++ {
				b[i] = 0
			}
		}
		prec := -1
		if rng.IntN(2) == 0 {
			prec = rng.IntN(scale + 1)
		}
		n := new(big.Int)
		for i := width - 1; i >= 0; i-- {
			n.Lsh(n, 8).Or(n, big.NewInt(int64(b[i])))
		}
		if !unsigned && b[width-1]&0x80 != 0 {
			n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*width)))
		}
		want, _ := new(big.Rat).SetFrac(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)).Float64()
		if got := fixedLE(b, scale, prec, unsigned); got != want {
			t.Fatalf("%x (scale %d, precision %d, unsigned %v): %v, want %v", b, scale, prec, unsigned, got, want)
		}
	}
}
