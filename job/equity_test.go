package job

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseEquityCSV(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []float64
		err      string
	}{
		{"engine layout", "time,equity,cash\n2026-01-01T00:00:00Z,100000,100000\n2026-01-02T00:00:00Z,100250.5,40000\n", []float64{100000, 100250.5}, ""},
		{"column anywhere, BOM, spaces", "\ufefftime, cash ,equity\nt,1, 7.5 \n", []float64{7.5}, ""},
		{"header only", "time,equity,cash\n", nil, ""},
		{"empty", "", nil, "empty file"},
		{"no equity column", "time,cash\nt,1\n", nil, "no equity column"},
		{"bad number", "time,equity,cash\nt,1\nt,abc,3\n", nil, "line 3 field equity"},
		{"short row", "time,equity,cash\nt\n", nil, "line 2: no equity field"},
		{"bad quoting", "time,equity\nt,\"1\n", nil, "row 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseEquityCSV(strings.NewReader(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestStoreEquity (moved here from the workbench with the reading of the
// file): a missing file is no curve, a long one is reduced to the points
// asked for, a bad one is an error naming it.
func TestStoreEquity(t *testing.T) {
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const id = "20261201-120000.000-e001"
	dir := filepath.Join(store.JobDir(id), "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if vals, err := store.Equity(id, 1024); vals != nil || err != nil {
		t.Errorf("a missing file: %v, %v", vals, err)
	}
	var b strings.Builder
	b.WriteString("time,equity,cash\n")
	for i := range 5000 {
		b.WriteString("t,")
		b.WriteString(strings.Repeat("1", 1+i%3))
		b.WriteString(",0\n")
	}
	path := filepath.Join(dir, "equity.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	vals, err := store.Equity(id, 1024)
	if err != nil || len(vals) != 1024 {
		t.Fatalf("got %d points, %v; want 1024", len(vals), err)
	}
	// The last value of each stretch, as the chart's downsampling takes it:
	// the curve ends with the file's last value (row 4999: "11").
	if vals[len(vals)-1] != 11 {
		t.Errorf("the curve ends with %v, want the file's last value 11", vals[len(vals)-1])
	}
	if all, err := store.Equity(id, 10000); err != nil || len(all) != 5000 {
		t.Errorf("more points than rows: %d, %v; want every row", len(all), err)
	}
	if err := os.WriteFile(path, []byte("time,equity\nt,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Equity(id, 1024); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("a bad file: %v", err)
	}
}

// TestStoreEquityPicksLikeDownsample: the values picked are the last of each
// of the equal stretches.
func TestStoreEquityPicksLikeDownsample(t *testing.T) {
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const id = "20261201-120000.000-e002"
	dir := filepath.Join(store.JobDir(id), "artifacts")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "equity.csv"), []byte("equity\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"), 0o644)
	got, err := store.Equity(id, 4)
	want := []float64{2, 5, 7, 10}
	if err != nil || len(got) != len(want) {
		t.Fatalf("Equity = %v, %v; want %v", got, err, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Equity = %v, want %v", got, want)
		}
	}
}

func FuzzParseEquityCSV(f *testing.F) {
	f.Add("time,equity,cash\nt,1,2\n")
	f.Add("equity\n1e308\n-0\nNaN\n")
	f.Add("a,\"b\nc\",equity\n")
	f.Fuzz(func(t *testing.T, in string) {
		vals, err := parseEquityCSV(strings.NewReader(in))
		if err != nil && vals != nil {
			t.Fatalf("values with an error: %v", err)
		}
	})
}
