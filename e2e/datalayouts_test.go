package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"stratbench/data"
	"stratbench/internal/e2etest"
	"stratbench/internal/testenv"
)

// Runs on data as other tools lay it out (hive partitions, freqtrade's data
// folders, a Nautilus catalog) equal the runs on the CSV of the same rows,
// and `stratbench data info` and `data convert` work end to end.

// writeLayouts runs data/testdata/layouts.py on jobs in dir.
func writeLayouts(t *testing.T, dir string, jobs []map[string]any) {
	t.Helper()
	py := testenv.Python(t, "pyarrow", "pandas", "polars", "duckdb")
	b, err := json.Marshal(jobs)
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "layouts.json")
	if err := os.WriteFile(spec, b, 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("data", "testdata", "layouts.py"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, script, spec)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("layouts.py: %v\n%s", err, out)
	}
}

// TestLayoutsRunAsCSV: a hive dataset, freqtrade's data folder and a
// Nautilus catalog each run as the CSV of the same rows (events, fills,
// final equity, orders hash); a freqtrade folder of two timeframes needs
// --timeframe, which names itself when it is missing.
func TestLayoutsRunAsCSV(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	barsCSV(t, filepath.Join(dir, "bars.csv"), []string{"SPY", "AAPL", "QQQ"}, 2500, 3)
	barsCSV(t, filepath.Join(dir, "pairs.csv"), []string{"BTC/USDT", "ETH/USDT"}, 2500, 4)
	writeLayouts(t, dir, []map[string]any{
		{"kind": "hive", "src": "bars.csv", "out": "hive", "writer": "pyarrow", "keys": []string{"symbol"}},
		{"kind": "freqtrade", "src": "pairs.csv", "out": "binance", "format": "feather"},
		{"kind": "freqtrade", "src": "pairs.csv", "out": "binance", "format": "feather", "timeframe": "5m"},
	})
	nautilus := filepath.Join("data", "testdata", "nautilus")
	for _, tc := range []struct {
		name      string
		csv       string
		data      []string
		timeframe string
	}{
		{"hive", filepath.Join(dir, "bars.csv"), []string{filepath.Join(dir, "hive")}, ""},
		{"freqtrade", filepath.Join(dir, "pairs.csv"), []string{filepath.Join(dir, "binance")}, "1m"},
		{"nautilus", filepath.Join(nautilus, "catalog.csv"), []string{filepath.Join(nautilus, "catalog")}, ""},
	} {
		want, _ := e.runData(t, "--data", tc.csv)
		if want.Fills == 0 {
			t.Fatalf("%s: the CSV run tells nothing apart: %+v", tc.name, want)
		}
		args := []string{}
		for _, d := range tc.data {
			args = append(args, "--data", d)
		}
		if tc.timeframe != "" {
			args = append(args, "--timeframe", tc.timeframe)
		}
		got, _ := e.runData(t, args...)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, want)
		}
	}
	r := e.Run("--ci", e2etest.Strategy("ok_counter.py"), "--data", filepath.Join(dir, "binance"))
	if want := "stratbench: --timeframe: " + filepath.Join(dir, "binance") + " holds candles of 2 timeframes (1m, 5m): choose one\n"; r.Code != 2 || r.Stderr != want {
		t.Errorf("two timeframes without --timeframe: exit %d, %q; want 2, %q", r.Code, r.Stderr, want)
	}
}

// TestDataCommands: `data info` describes the data per symbol and file
// with the fingerprint a run records (in text and JSON), and `data
// convert` writes one sorted Parquet file that runs as its input does,
// whole and in a window (its refusals and bad data:
// testdata/script/data_convert_refusals.txtar).
func TestDataCommands(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "bars.csv")
	barsCSV(t, csvPath, []string{"SPY", "AAPL", "QQQ"}, 2500, 5)

	r := e.Run("data", "info", "--output", "json", csvPath)
	if r.Code != 0 {
		t.Fatalf("data info: exit %d: %s", r.Code, r.Stderr)
	}
	var sum data.Summary
	if err := json.Unmarshal([]byte(r.Stdout), &sum); err != nil {
		t.Fatalf("data info --output json: %v\n%s", err, r.Stdout)
	}
	if sum.Bars != 7500 || len(sum.Symbols) != 3 || sum.Symbols[0].Symbol != "AAPL" || sum.Symbols[0].Bars != 2500 ||
		sum.Symbols[0].IntervalS != 60 || sum.Symbols[0].Gaps != 0 || len(sum.Files) != 1 || sum.Files[0].Format != "csv" ||
		!regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(sum.Fingerprint) {
		t.Errorf("data info: %+v", sum)
	}
	text := e.Run("data", "info", csvPath, "--from", "2026-03-02 15:00:00")
	if text.Code != 0 || !strings.Contains(text.Stdout, "SYMBOL  ") || !strings.Contains(text.Stdout, "\nAAPL  ") ||
		!strings.Contains(text.Stdout, "window       2026-03-02T15:00:00Z..-\n") || strings.Contains(text.Stdout, sum.Fingerprint) {
		t.Errorf("data info (text, a window): exit %d\n%s%s", text.Code, text.Stdout, text.Stderr)
	}

	out := filepath.Join(dir, "converted.parquet")
	r = e.Run("data", "convert", csvPath, "--out", out, "--output", "json")
	if r.Code != 0 {
		t.Fatalf("data convert: exit %d: %s", r.Code, r.Stderr)
	}
	var conv data.Converted
	if err := json.Unmarshal([]byte(r.Stdout), &conv); err != nil || conv.Bars != 7500 || conv.Fingerprint != sum.Fingerprint {
		t.Errorf("data convert: %+v %v\n%s", conv, err, r.Stdout)
	}
	want, _ := e.runData(t, "--data", csvPath)
	got, _ := e.runData(t, "--data", out)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("converted:\n got %+v\nwant %+v", got, want)
	}
	window := []string{"--from", "2026-03-03 00:00:00", "--to", "2026-03-03 06:00:00"}
	want, _ = e.runData(t, append(window, "--data", csvPath)...)
	got, _ = e.runData(t, append(window, "--data", out)...)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("converted, a window:\n got %+v\nwant %+v", got, want)
	}
}

// TestDataConvertInterrupted: SIGINT while data convert writes ends it with
// 130, the file it was writing removed and the output untouched (it is
// written beside and renamed only when whole).
func TestDataConvertInterrupted(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "bars.csv")
	barsCSV(t, csvPath, []string{"SPY", "AAPL", "QQQ"}, 700_000, 6)
	out := filepath.Join(dir, "out.parquet")
	if err := os.WriteFile(out, []byte("the old content"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := e.Command("data", "convert", csvPath, "--out", out)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The file being written appears once the data is open and checked.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if tmp, _ := filepath.Glob(filepath.Join(dir, ".out.parquet.*")); len(tmp) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("data convert never started writing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	code := e.ExitCode(cmd.Wait())
	left, _ := filepath.Glob(filepath.Join(dir, ".out.parquet.*"))
	old, _ := os.ReadFile(out)
	if code != 130 || len(left) != 0 || string(old) != "the old content" {
		t.Errorf("interrupted: exit %d (%s), left %v, out %q", code, stderr.String(), left, old)
	}
}
