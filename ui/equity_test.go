package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stratbench/themes"
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

func TestReadEquityFile(t *testing.T) {
	dir := t.TempDir()
	if vals, err := readEquityFile(filepath.Join(dir, "equity.csv")); vals != nil || err != nil {
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
	vals, err := readEquityFile(path)
	if err != nil || len(vals) != equityPoints {
		t.Fatalf("got %d points, %v; want %d", len(vals), err, equityPoints)
	}
	if err := os.WriteFile(path, []byte("time,equity\nt,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readEquityFile(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("a bad file: %v", err)
	}
}

func TestDownsample(t *testing.T) {
	vals := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	got := downsample(vals, 4)
	want := []float64{2, 5, 7, 10} // the last value of each bucket
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("downsample = %v, want %v", got, want)
		}
	}
	if d := downsample(vals, 20); len(d) != 10 {
		t.Errorf("upsampled to %d points", len(d))
	}
	if downsample(vals, 0) != nil {
		t.Error("zero points gave values")
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
		// Whatever was parsed draws without panicking.
		chart(themes.Plain(), vals, 40, 6)
	})
}
