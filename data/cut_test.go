package data

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCutCopies: a cut copy holds a file's bars up to the cut, inclusive,
// and nothing after: a CSV (header, blank line and quoting kept as they
// were, a row that does not parse left out), a JSON Lines file, a folder's
// files one by one, a Parquet file written again (its bars are those of
// the window that ends at the cut); a Feather file is not cut.
func TestCutCopies(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	csvPath := write("bars.csv", "\n"+`timestamp,symbol,open,high,low,close,volume,note`+"\r\n"+
		`2026-01-05T00:00:00Z,AAA,1,1,1,1,1,"a, b"`+"\r\n"+
		`2026-01-05T00:01:00Z,AAA,2,2,2,2,1,x`+"\n\n"+
		`2026-01-05T00:02:00Z,AAA,3,3,3,3,1,x`+"\n"+
		`2026-01-05 00:01:30,BBB,4,4,4,4,1,x`+"\n")
	jsonl := write("more/bars.jsonl", `{"timestamp": "2026-01-05T00:00:00Z", "symbol": "CCC", "open": 1, "high": 1, "low": 1, "close": 1, "volume": 1}`+"\n"+
		`{"timestamp": 1767571320, "symbol": "CCC", "open": 1, "high": 1, "low": 1, "close": 1, "volume": 1}`+"\n")
	os.Mkdir(filepath.Join(dir, "pq"), 0o755)
	_, pq := writeBenchData(t, filepath.Join(dir, "pq"), 20)
	os.Remove(filepath.Join(dir, "pq", "bars.csv"))
	feather := write("f/bars.feather", "ARROW1\x00\x00")
	out := t.TempDir()
	to := time.Date(2026, 1, 5, 0, 1, 30, 0, time.UTC)
	cut, notCut, err := CutCopies(context.Background(), []string{csvPath, filepath.Join(dir, "more"), feather}, "", to, out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(notCut, []string{feather}) || len(cut) != 2 {
		t.Fatalf("cut %v, not cut %v", cut, notCut)
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got, want := read(cut[0].Copy), "\n"+`timestamp,symbol,open,high,low,close,volume,note`+"\n"+
		`2026-01-05T00:00:00Z,AAA,1,1,1,1,1,"a, b"`+"\n"+`2026-01-05T00:01:00Z,AAA,2,2,2,2,1,x`+"\n\n"+
		`2026-01-05 00:01:30,BBB,4,4,4,4,1,x`+"\n"; cut[0].Path != csvPath || got != want {
		t.Errorf("the CSV's copy of %s:\n%q\nwant\n%q", cut[0].Path, got, want)
	}
	if got := read(cut[1].Copy); cut[1].Path != jsonl || strings.Count(got, "\n") != 1 || !strings.Contains(got, `"2026-01-05T00:00:00Z"`) {
		t.Errorf("the JSON Lines copy of %s: %q", cut[1].Path, got)
	}
	// The Parquet copy is the window's bars, and a set reads it.
	to = testStart.Add(90 * time.Second) // the bars of two symbols at three times
	cut, _, err = CutCopies(context.Background(), []string{pq}, "", to, t.TempDir())
	if err != nil || len(cut) != 1 || !strings.HasSuffix(cut[0].Copy, ".parquet") {
		t.Fatalf("the Parquet file: %v, %v", cut, err)
	}
	s, err := Open(context.Background(), []string{cut[0].Copy}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if in := s.Info(); in.Events != 4 || !in.To.Equal(testStart.Add(time.Minute)) {
		t.Errorf("the Parquet copy: %d bars to %s", in.Events, in.To)
	}
	// A cut before every bar of a Parquet file leaves it as it is.
	_, notCut, err = CutCopies(context.Background(), []string{pq}, "", time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), t.TempDir())
	if err != nil || !slices.Equal(notCut, []string{pq}) {
		t.Errorf("a Parquet file without bars before the cut: %v, %v", notCut, err)
	}
}

// FuzzCutLines: any CSV or JSON Lines text is cut without a panic, into a
// copy whose lines are lines of the file, in their order.
func FuzzCutLines(f *testing.F) {
	f.Add("timestamp,symbol,open,high,low,close,volume\n2026-01-05T00:00:00Z,A,1,1,1,1,1\n", false)
	f.Add(`{"timestamp": 1767571320, "symbol": "C", "open": 1, "high": 1, "low": 1, "close": 1, "volume": 1}`+"\n", true)
	f.Add("timestamp,symbol,open,high,low,close,volume\r\n\"2026-01-05\",\"A\"\"\",1,1,1,1,1", false)
	f.Fuzz(func(t *testing.T, text string, jsonl bool) {
		dir := t.TempDir()
		in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
		if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if cutLines(context.Background(), in, out, jsonl, time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC).UnixNano()) != nil {
			return
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 {
			return
		}
		lines := strings.Split(strings.ReplaceAll(strings.TrimPrefix(text, "\xef\xbb\xbf"), "\r\n", "\n"), "\n")
		i := 0
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			for i < len(lines) && strings.TrimSuffix(lines[i], "\r") != l {
				i++
			}
			if i == len(lines) {
				t.Fatalf("line %q of the copy is not a line of the file, in order", l)
			}
			i++
		}
	})
}
