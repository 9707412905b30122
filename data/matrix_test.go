package data

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"stratbench/internal/testenv"
)

// TestParquetWritersMatrix: the rows of one CSV written as Parquet by
// pyarrow, pandas, polars and duckdb in every compression they offer
// (LZ4_RAW included), every encoding (dictionary, plain, byte-stream-split,
// the delta encodings), large and view strings, every timestamp unit and
// zone, INT96, float32, decimals, page v2, no statistics, blocks by
// symbol, small row groups and pages (testdata/parquet_matrix.py: one
// process writes them all): each replays exactly as the CSV of the same
// rows, decoded and streamed, whole and in a window. A regression of the
// reader in any of them fails here.
func TestParquetWritersMatrix(t *testing.T) {
	py := testenv.Python(t, "pyarrow", "pandas", "polars", "duckdb")
	dir := t.TempDir()
	src := filepath.Join(dir, "src.csv")
	syms := []string{"SPY", "QQQ", "AAPL", "MSFT"}
	text := genCSV(genOpts{symbols: syms, steps: 1500, step: time.Minute, start: testStart, seed: 35, gaps: true})
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "parquet_matrix.py"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if b, err := exec.Command(py, script, src, out).CombinedOutput(); err != nil {
		t.Fatalf("parquet_matrix.py: %v\n%s", err, b)
	}
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest []struct{ File, Expect string }
	if err := json.Unmarshal(b, &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest) < 49 {
		t.Fatalf("%d variants", len(manifest))
	}
	windows := []Window{{}, {From: testStart.Add(400 * time.Minute), To: testStart.Add(901 * time.Minute)}}
	writers := map[string]int{}
	for _, v := range manifest {
		writers[strings.Split(v.File, "-")[0]]++
		oracle := src
		if v.Expect != "" {
			oracle = filepath.Join(out, v.Expect)
		}
		for _, w := range windows {
			cs, cb := replay(t, []string{oracle}, Options{Window: w})
			for _, mode := range modes {
				what := v.File + " " + mode.name + " window " + w.String()
				ps, pb := replay(t, []string{filepath.Join(out, v.File)}, Options{Window: w, Budget: mode.budget})
				sameReplay(t, what, ps, pb, cs, cb)
			}
		}
	}
	for _, w := range []string{"pa", "pd", "pl", "dd"} {
		if writers[w] == 0 {
			t.Errorf("no variant written by %s: %v", w, writers)
		}
	}
}
