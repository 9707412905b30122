package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"stratbench/contract"
	"stratbench/internal/e2etest"
	"stratbench/internal/testenv"
	"stratbench/job"
)

// Runs on Parquet files written by pyarrow (data/testdata/parquet_variants.py)
// equal the runs on the CSV of the same rows: events, fills, final equity,
// orders hash.

// barsCSV writes steps minutes of bars of symbols as CSV, the symbols of
// each minute in a shuffled order (the replay must not depend on it),
// prices with two decimals.
func barsCSV(t *testing.T, path string, symbols []string, steps int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 11))
	price := make([]float64, len(symbols))
	for i := range price {
		price[i] = 80 + 20*float64(i)
	}
	round2 := func(f float64) float64 { v, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'f', 2, 64), 64); return v }
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	var sb strings.Builder
	sb.WriteString("timestamp,symbol,open,high,low,close,volume\n")
	start := time.Date(2026, 3, 2, 14, 30, 0, 0, time.UTC)
	for k := range steps {
		ts := start.Add(time.Duration(k) * time.Minute).Format(time.RFC3339)
		for _, s := range rng.Perm(len(symbols)) {
			open := price[s]
			cl := max(10, round2(open*(1+(rng.Float64()-0.5)*0.01)))
			hi := round2(max(open, cl) + float64(rng.IntN(30))/100)
			lo := max(1, round2(min(open, cl)-float64(rng.IntN(30))/100))
			price[s] = cl
			sb.WriteString(ts + "," + symbols[s] + "," + num(open) + "," + num(hi) + "," + num(lo) + "," + num(cl) + "," +
				strconv.Itoa(100+rng.IntN(5000)) + "\n")
		}
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeParquet runs the pyarrow script on jobs in dir.
func writeParquet(t *testing.T, dir string, jobs []map[string]any) {
	t.Helper()
	py := testenv.Python(t, "pyarrow")
	b, err := json.Marshal(jobs)
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "jobs.json")
	if err := os.WriteFile(spec, b, 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("data", "testdata", "parquet_variants.py"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, script, spec)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pyarrow: %v\n%s", err, out)
	}
}

// runOutcome is what two runs of the same rows must share.
type runOutcome struct {
	Events      int
	Symbols     []string
	From, To    string
	Fills       int
	Rejections  int
	FinalEquity float64
	OrdersHash  string
}

func (e *env) runData(t *testing.T, args ...string) (runOutcome, *job.Report) {
	t.Helper()
	strat := filepath.Join("backtest", "testdata", "sma_cross.py")
	r := e.Run(append([]string{"--ci", "--output", "json", strat}, args...)...)
	if r.Code != 0 {
		t.Fatalf("%v: exit %d: %s", args, r.Code, r.Stderr)
	}
	rep := e2etest.DecodeReport(t, r.Stdout)
	return runOutcome{Events: rep.Data.Events, Symbols: rep.Data.Symbols, From: rep.Data.From, To: rep.Data.To,
		Fills: rep.Metrics.Fills, Rejections: rep.Metrics.Rejections, FinalEquity: rep.Metrics.FinalEquity, OrdersHash: rep.OrdersHash}, rep
}

func TestParquetRunsAsCSV(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	barsCSV(t, filepath.Join(dir, "bars.csv"), []string{"SPY", "AAPL", "QQQ"}, 2500, 1)
	// name, the pyarrow job, and whether the file holds the CSV's values
	// exactly (else it runs as pyarrow reads it back: the expect CSV).
	variants := []struct {
		name     string
		job      map[string]any
		lossless bool
	}{
		{"ns-dict-rowgroups.parquet", map[string]any{"time": "ns", "row_group_size": 1000}, true},
		{"us-plain-symbols.parquet", map[string]any{"time": "us", "symbol": "plain"}, true},
		{"ms.parquet", map[string]any{"time": "ms", "row_group_size": 3000}, true},
		{"s.parquet", map[string]any{"time": "s"}, true},
		{"int-seconds.parquet", map[string]any{"time": "int_s"}, true},
		{"int-millis.parquet", map[string]any{"time": "int_ms", "compression": "zstd"}, true},
		{"decimal.parquet", map[string]any{"prices": "dec"}, true},
		{"float32.parquet", map[string]any{"prices": "f32", "row_group_size": 2000}, false},
		{"int64.parquet", map[string]any{"prices": "i64"}, false},
		{"by-symbol", map[string]any{"split": true, "row_group_size": 700}, true}, // a folder, SPY.parquet…, no symbol column
	}
	var jobs []map[string]any
	for _, v := range variants {
		job := map[string]any{"src": "bars.csv", "out": v.name, "expect": v.name + ".expect.csv"}
		for k, x := range v.job {
			job[k] = x
		}
		jobs = append(jobs, job)
	}
	writeParquet(t, dir, jobs)
	csvRun, _ := e.runData(t, "--data", filepath.Join(dir, "bars.csv"))
	if csvRun.Events != 7500 || csvRun.Fills == 0 || csvRun.Rejections == 0 ||
		strings.Join(csvRun.Symbols, ",") != "AAPL,QQQ,SPY" {
		t.Fatalf("the CSV run tells nothing apart: %+v", csvRun)
	}
	for _, v := range variants {
		want := csvRun
		if !v.lossless {
			want, _ = e.runData(t, "--data", filepath.Join(dir, v.name+".expect.csv"))
		}
		got, _ := e.runData(t, "--data", filepath.Join(dir, v.name))
		if got.Symbols == nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got %+v\nwant %+v", v.name, got, want)
		}
	}
	// --data repeated, the CSV rows of one symbol against the Parquet files
	// of the others: the same run again.
	mixed, _ := e.runData(t, "--data", filepath.Join(dir, "by-symbol", "SPY.parquet"),
		"--data", filepath.Join(dir, "by-symbol", "AAPL.parquet"), "--data", filepath.Join(dir, "by-symbol", "QQQ.parquet"))
	if fmt.Sprint(mixed) != fmt.Sprint(csvRun) {
		t.Errorf("--data repeated:\n got %+v\nwant %+v", mixed, csvRun)
	}

	// A window: the same as the CSV's, and row groups wholly outside it
	// are not read at all: with their bytes destroyed, the run is the same.
	window := []string{"--from", "2026-03-03 00:00:00", "--to", "2026-03-03 06:00:00"}
	csvWin, _ := e.runData(t, append(window, "--data", filepath.Join(dir, "bars.csv"))...)
	if csvWin.Events != 3*361 || csvWin.Fills == 0 {
		t.Fatalf("window run: %+v", csvWin)
	}
	pq := filepath.Join(dir, "ns-dict-rowgroups.parquet")
	corrupt := filepath.Join(dir, "corrupt.parquet")
	destroyed := destroyRowGroupsBefore(t, pq, corrupt, time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC))
	if destroyed == 0 {
		t.Fatal("no row group lies before the window")
	}
	for _, path := range []string{pq, corrupt} {
		got, _ := e.runData(t, append(window, "--data", path)...)
		if fmt.Sprint(got) != fmt.Sprint(csvWin) {
			t.Errorf("%s with %v:\n got %+v\nwant %+v", filepath.Base(path), window, got, csvWin)
		}
	}
	r := e.Run("--ci", e2etest.Strategy("ok_counter.py"), "--data", corrupt)
	if r.Code != 2 || !strings.Contains(r.Stderr, "read bars "+corrupt) {
		t.Errorf("the destroyed row groups read: exit %d, %s", r.Code, r.Stderr)
	}
}

// destroyRowGroupsBefore copies the Parquet file src to dst with the bytes
// of every row group whose rows all lie before t overwritten, footer
// untouched, and returns how many it destroyed.
func destroyRowGroupsBefore(t *testing.T, src, dst string, before time.Time) int {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(strings.NewReader(string(b)), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, rg := range f.Metadata().RowGroups {
		var tsMax int64 = math.MinInt64
		start, end := int64(math.MaxInt64), int64(0)
		for _, c := range rg.Columns {
			md := c.MetaData
			off := md.DataPageOffset
			if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < off {
				off = md.DictionaryPageOffset
			}
			start, end = min(start, off), max(end, off+md.TotalCompressedSize)
			if md.PathInSchema[0] == "timestamp" {
				if len(md.Statistics.MaxValue) != 8 {
					t.Fatalf("no timestamp statistics")
				}
				var v int64
				for i := 7; i >= 0; i-- {
					v = v<<8 | int64(md.Statistics.MaxValue[i])
				}
				tsMax = v
			}
		}
		if tsMax < before.UnixNano() {
			for i := start; i < end; i++ {
				b[i] = 0xff
			}
			n++
		}
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return n
}

// Bad Parquet is exit 2 naming the file, the row and the column, before any
// hook runs; with the data streaming (STRATBENCH_DATA_BUDGET=0), a bad
// value met mid-run fails the job with kind data, exit 2 too, its report
// saved.
func TestBadParquet(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	barsCSV(t, filepath.Join(dir, "bars.csv"), []string{"SPY", "QQQ"}, 600, 2)
	bad := map[string]map[string]any{
		"nan.parquet":       {"set": [][]any{{401, "close", "nan"}}, "row_group_size": 100},
		"negative.parquet":  {"set": [][]any{{123, "low", -1.5}}},
		"backwards.parquet": {"set": [][]any{{6, "timestamp", 0}}, "time": "int_s"},
		"string.parquet":    {"string_column": "close"},
	}
	var jobs []map[string]any
	for name, job := range bad {
		j := map[string]any{"src": "bars.csv", "out": name}
		for k, v := range job {
			j[k] = v
		}
		jobs = append(jobs, j)
	}
	writeParquet(t, dir, jobs)
	nan, err := os.ReadFile(filepath.Join(dir, "nan.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cut.parquet"), nan[:len(nan)-100], 0o644); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"nan.parquet":       ` row 402 column "close": not a finite number: NaN`,
		"negative.parquet":  ` row 124 column "low": must be > 0: -1.5`,
		"backwards.parquet": ` row 7 column "timestamp": `,
		"string.parquet":    ` column "close": wrong column type BYTE_ARRAY (STRING)`,
		"cut.parquet":       `: truncated: the file does not end with a Parquet footer`,
	} {
		path := filepath.Join(dir, name)
		r := e.Run("--ci", e2etest.Strategy("ok_counter.py"), "--data", path)
		if r.Code != 2 || !strings.Contains(r.Stderr, "read bars "+path+want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", name, r.Code, r.Stderr, want)
		}
		if strings.Contains(r.Stdout, "job_id") {
			t.Errorf("%s: a job ran on bad data: %s", name, r.Stdout)
		}
	}

	// Streamed: the structure is checked before the run, the values as
	// they stream.
	path := filepath.Join(dir, "nan.parquet")
	cmd := e.Command("--ci", "--output", "json", e2etest.Strategy("ok_counter.py"), "--data", path)
	cmd.Env = append(cmd.Env, "STRATBENCH_DATA_BUDGET=0")
	out, err := cmd.Output()
	ee, _ := err.(*exec.ExitError)
	if ee == nil || ee.ExitCode() != 2 {
		t.Fatalf("streamed NaN: %v, want exit 2\n%s", err, out)
	}
	rep := e2etest.DecodeReport(t, string(out))
	f := rep.Failure
	if rep.Status != job.StatusFailed || f == nil || f.Kind != contract.KindData || f.EventIndex == nil ||
		*f.EventIndex == 0 || *f.EventIndex > 401 || !strings.Contains(f.Message, "read bars "+path+` row 402 column "close": not a finite number: NaN`) {
		t.Fatalf("streamed NaN: status %s, failure %+v", rep.Status, f)
	}
	if rep.Hooks[contract.HookOnData].Count != *f.EventIndex {
		t.Errorf("on_data ran %d times before the bad bar at event %d", rep.Hooks[contract.HookOnData].Count, *f.EventIndex)
	}
	saved, err := os.ReadFile(filepath.Join(e.Home, "jobs", rep.JobID, "job.json"))
	if err != nil || !strings.Contains(string(saved), `"kind": "data"`) {
		t.Errorf("job.json: %v\n%s", err, saved)
	}
}

// TestLZ4RunsAsCSV: Parquet files compressed with LZ4 (LZ4_RAW: pyarrow's
// and polars' compression="lz4") run exactly as the CSV of the same rows
// (events, symbols, fills, final equity, orders hash), at sizes on both
// sides of the page size where the old reader broke (200 rows and more:
// "corrupt page … expected 3000 values but got only 0", or with required
// columns values from a stale buffer: "volume must be >= 0"), with
// nullable and required columns.
func TestLZ4RunsAsCSV(t *testing.T) {
	e := newEnv(t)
	py := testenv.Python(t, "pyarrow", "polars")
	dir := t.TempDir()
	sizes := []struct {
		symbols []string
		steps   int
	}{
		{[]string{"SPY"}, 1}, {[]string{"SPY"}, 199}, {[]string{"SPY"}, 200},
		{[]string{"SPY", "QQQ", "AAPL"}, 1000}, {[]string{"SPY", "QQQ"}, 50_000},
	}
	var csvs []string
	for i, s := range sizes {
		path := filepath.Join(dir, fmt.Sprintf("bars%d.csv", i))
		barsCSV(t, path, s.symbols, s.steps, uint64(10+i))
		csvs = append(csvs, path)
	}
	script := `
import sys
import polars as pl, pyarrow as pa, pyarrow.csv as pc, pyarrow.parquet as pq
for path in sys.argv[1:]:
    t = pc.read_csv(path)
    t = t.set_column(0, "timestamp", t.column("timestamp").cast(pa.timestamp("ns", tz="UTC")))
    base = path[:-4]
    pq.write_table(t, base + "-pyarrow.parquet", compression="lz4")
    req = t.cast(pa.schema([pa.field(f.name, f.type, nullable=False) for f in t.schema]))
    pq.write_table(req, base + "-pyarrow-required.parquet", compression="lz4")
    pl.from_arrow(t).write_parquet(base + "-polars.parquet", compression="lz4")
`
	if out, err := exec.Command(py, append([]string{"-c", script}, csvs...)...).CombinedOutput(); err != nil {
		t.Fatalf("writing LZ4 files: %v\n%s", err, out)
	}
	for i, path := range csvs {
		want, _ := e.runData(t, "--data", path)
		if want.Events != len(sizes[i].symbols)*sizes[i].steps || i >= 3 && want.Fills == 0 {
			t.Fatalf("%s: the CSV run tells nothing apart: %+v", path, want)
		}
		for _, variant := range []string{"-pyarrow", "-pyarrow-required", "-polars"} {
			pqPath := strings.TrimSuffix(path, ".csv") + variant + ".parquet"
			got, _ := e.runData(t, "--data", pqPath)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s:\n got %+v\nwant %+v", filepath.Base(pqPath), got, want)
			}
		}
	}
}
