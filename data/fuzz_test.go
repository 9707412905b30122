package data

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
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
		`{"timestamp":"2026-01-01T00:00:00Z","symbol":"\u0041","open":1,"high":1,"low":1,"close":1,"volume":1}`)
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
