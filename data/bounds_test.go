package data

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"stratbench/internal/pqcraft"
)

// The bounds of what a data file can make stratbench hold, whatever its
// headers say: files crafted byte by byte (internal/pqcraft) claim what
// no writer would, and Open and a replay must allocate in all no more than
// a bound that does not depend on the claim (runtime.MemStats.TotalAlloc:
// every byte allocated, freed or not).

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestHugePagesAreDecodedInPieces: a file of a few KiB whose pages hold 30
// million values each is read in pieces: a constant timestamp fails at
// row 2, 30 million valid bars stream, each in memory that does not grow
// with the count. parquet-go decoded each page whole: 240 MB a column.
func TestHugePagesAreDecodedInPieces(t *testing.T) {
	const n = 30_000_000
	constant := writeTemp(t, "const.parquet", pqcraft.HugePage(n, true))
	steps := writeTemp(t, "steps.parquet", pqcraft.HugePage(n, false))
	for _, path := range []string{constant, steps} {
		if info, _ := os.Stat(path); info.Size() > 8<<10 {
			t.Fatalf("%s: %d bytes, want a few KiB", path, info.Size())
		}
	}
	var err error
	got := allocated(func() { _, err = Open(context.Background(), []string{constant}, Options{}) })
	var de *Error
	if !errors.As(err, &de) || de.Row != 2 || de.Column != "timestamp" || !strings.Contains(err.Error(), "duplicates row 1") {
		t.Errorf("constant timestamps: %v", err)
	}
	if got > 16<<20 {
		t.Errorf("constant timestamps: Open allocated %d MiB", got>>20)
	}
	// Valid: every bar is scanned in Open (30 million timestamps), then a
	// window of the first hour streams.
	w := Window{To: time.Date(2026, 1, 1, 0, 59, 59, 0, time.UTC)}
	var bars Bars
	got = allocated(func() {
		s, err := Open(context.Background(), []string{steps}, Options{Window: w})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if s.Info().Resident {
			t.Error("decoded whole")
		}
		if bars, err = readAll(t, s); err != nil {
			t.Fatal(err)
		}
	})
	if bars.Len() != 3600 || bars.Close[3599] != 10 {
		t.Errorf("%d bars", bars.Len())
	}
	if got > 64<<20 {
		t.Errorf("30 million bars in a page: Open and a replay allocated %d MiB", got>>20)
	}
	t.Logf("30 million bars in a page: %d MiB allocated", got>>20)
}

// TestFooterBounds: a footer over 16 MiB is refused before it is read; a
// smaller one of more row groups than the index budget holds is refused
// before they are allocated.
func TestFooterBounds(t *testing.T) {
	for _, tc := range []struct {
		groups int
		want   string
	}{
		{200_000, "footers over 16 MiB are not read"},
		{50_000, "too much to index"},
	} {
		path := writeTemp(t, "groups.parquet", pqcraft.ManyGroups(tc.groups))
		var err error
		got := allocated(func() { _, err = Open(context.Background(), []string{path}, Options{}) })
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%d row groups: %v, want %q", tc.groups, err, tc.want)
		}
		if got > 48<<20 {
			t.Errorf("%d row groups: Open allocated %d MiB", tc.groups, got>>20)
		}
		t.Logf("%d row groups: %v (%d MiB allocated)", tc.groups, err, got>>20)
	}
	// 2,000 row groups are read.
	s, b := replay(t, []string{writeTemp(t, "ok.parquet", pqcraft.ManyGroups(2000))}, Options{})
	if s.Info().Events != 2000 || b.Len() != 2000 {
		t.Errorf("2000 row groups: %d bars", b.Len())
	}
}

// TestPageBounds: a page that says it is larger than 16 MiB is refused
// before anything is allocated for it, naming the file, the column and the
// limit.
func TestPageBounds(t *testing.T) {
	page := pqcraft.DataPage(1, pqcraft.Plain, nil, pqcraft.PlainDouble(10))
	// The header's sizes, rewritten: field 2 (uncompressed) of the header.
	w := &pqcraft.Writer{}
	w.Begin()
	w.I32(1, pqcraft.PageData)
	w.I32(2, 1<<31-1)
	w.I32(3, 8)
	w.Struct(5)
	w.I32(1, 1)
	w.I32(2, pqcraft.Plain)
	w.I32(3, 3)
	w.I32(4, 3)
	w.End()
	w.End()
	big := append(w.B, page[len(page)-8:]...)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	one := func(p []byte) pqcraft.Chunk { return pqcraft.Chunk{NumValues: 1, Pages: [][]byte{p}} }
	file := pqcraft.File(pqcraft.BarColumns, []pqcraft.Group{{Rows: 1, Chunks: []pqcraft.Chunk{
		one(pqcraft.DataPage(1, pqcraft.Plain, nil, pqcraft.PlainInt64(t0))), one(pqcraft.DataPage(1, pqcraft.Plain, nil, pqcraft.PlainStrings("X"))),
		one(page), one(page), one(page), one(big), one(page),
	}}})
	path := writeTemp(t, "big.parquet", file)
	var err error
	got := allocated(func() { _, err = Open(context.Background(), []string{path}, Options{}) })
	if err == nil || !strings.Contains(err.Error(), path+` column "close": a page of `) || !strings.Contains(err.Error(), "pages over 16 MiB are not read") {
		t.Errorf("a page of 2 GiB: %v", err)
	}
	if got > 8<<20 {
		t.Errorf("a page of 2 GiB: Open allocated %d MiB", got>>20)
	}
}

// TestChangedInPlace: a file rewritten in place after Open, same size and
// modification time restored, is not replayed: the stream checks every
// stretch it reads against the hashes Open made of it (the bytes the
// digest covers), and fails naming the file. Before, a streamed CSV
// replayed the new rows under the old digest.
func TestChangedInPlace(t *testing.T) {
	dir := t.TempDir()
	text := genCSV(genOpts{symbols: []string{"A", "B"}, steps: 20000, step: time.Minute, start: testStart, seed: 5})
	csvPath := filepath.Join(dir, "bars.csv")
	jsonPath := filepath.Join(dir, "bars.jsonl")
	if err := os.WriteFile(csvPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var jl strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(text), "\n")[1:] {
		f := strings.Split(line, ",")
		jl.WriteString(`{"timestamp":"` + f[0] + `","symbol":"` + f[1] + `","open":` + f[2] + `,"high":` + f[3] +
			`,"low":` + f[4] + `,"close":` + f[5] + `,"volume":` + f[6] + "}\n")
	}
	if err := os.WriteFile(jsonPath, []byte(jl.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	pyarrow(t, dir, []map[string]any{{"src": "bars.csv", "out": "bars.parquet", "row_group_size": 10000, "compression": "none", "encoding": "plain"}})
	// rewrite changes a byte near the end of the file to another digit,
	// keeping its size and modification time.
	rewrite := func(path string, at func(b []byte) int) {
		t.Helper()
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		i := at(b)
		if b[i] == '1' {
			b[i] = '2'
		} else {
			b[i] = '1'
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(b[i:i+1], int64(i)); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	// A digit of the last line's volume; in the Parquet file, a byte of
	// the last row group's close column (plain doubles: a changed price).
	lastDigit := func(b []byte) int { return len(b) - 3 }
	for _, tc := range []struct {
		path string
		at   func([]byte) int
	}{
		{csvPath, lastDigit},
		{jsonPath, func(b []byte) int { return len(b) - 4 }},
		{filepath.Join(dir, "bars.parquet"), func([]byte) int { return int(closeChunkByte(t, filepath.Join(dir, "bars.parquet"))) }},
	} {
		s, err := Open(context.Background(), []string{tc.path}, Options{Budget: -1})
		if err != nil {
			t.Fatal(err)
		}
		d1, err := s.Digest(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rewrite(tc.path, tc.at)
		_, err = readAll(t, s)
		var de *Error
		if !errors.As(err, &de) || de.File != tc.path || !strings.Contains(err.Error(), "the file changed since it was opened") {
			t.Errorf("%s changed in place: replay %v", filepath.Base(tc.path), err)
		}
		if d2, _ := s.Digest(context.Background()); d2 != d1 {
			t.Errorf("%s: the digest changed after Open", filepath.Base(tc.path))
		}
		s.Close()
	}
}

// closeChunkByte returns the offset of a byte in the middle of the last
// row group's close column of a Parquet file.
func closeChunkByte(t *testing.T, path string) int64 {
	t.Helper()
	s, err := Open(context.Background(), []string{path}, Options{Budget: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pf := s.srcs[0].pq
	ch := pf.groups[len(pf.groups)-1].chunks[colClose]
	return (ch.start + ch.end) / 2
}

// TestBlankLinesAreMarked: a CSV with megabytes of blank lines between two
// bars streams through stretches of at most 256 KiB and a line: blank
// lines are marked too, and the bars replay as without them.
func TestBlankLinesAreMarked(t *testing.T) {
	text := genCSV(genOpts{symbols: []string{"A"}, steps: 50, step: time.Minute, start: testStart, seed: 8})
	lines := strings.SplitAfter(text, "\n")
	var b strings.Builder
	for i, l := range lines {
		b.WriteString(l)
		if i == 20 {
			b.WriteString(strings.Repeat("\n", 8<<20))
		}
	}
	path := writeTemp(t, "blank.csv", []byte(b.String()))
	plain := writeTemp(t, "plain.csv", []byte(text))
	s, err := Open(context.Background(), []string{path}, Options{Budget: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, r := range s.srcs[0].lines.runs {
		for k, m := range r.marks {
			end := r.end
			if k+1 < len(r.marks) {
				end = r.marks[k+1].offset
			}
			if end-m.offset > markBytes+maxLineBytes {
				t.Fatalf("a stretch of %d bytes", end-m.offset)
			}
		}
	}
	var bars Bars
	got := allocated(func() { bars, err = readAll(t, s) })
	if err != nil {
		t.Fatal(err)
	}
	ps, pb := replay(t, []string{plain}, Options{})
	sameReplay(t, "with blank lines", s, bars, ps, pb)
	if got > 16<<20 {
		t.Errorf("the replay allocated %d MiB", got>>20)
	}
}

// TestStreamBudgetRefusesAFile: a file whose stream alone would hold more
// than the stream budget is refused by Open, naming the file and the
// sizes, before anything streams.
func TestStreamBudgetRefusesAFile(t *testing.T) {
	path := writeTemp(t, "bars.parquet", pqcraft.HugePage(1000, false))
	_, err := Open(context.Background(), []string{path}, Options{Budget: -1, StreamBudget: 200 << 10})
	if err == nil || !strings.Contains(err.Error(), "read bars "+path+": reading it takes ") ||
		!strings.Contains(err.Error(), "more than the 200 KiB a replay's streams may hold") {
		t.Errorf("a stream over the budget: %v", err)
	}
	if _, err := Open(context.Background(), []string{path}, Options{Budget: -1, StreamBudget: 1 << 20}); err != nil {
		t.Errorf("within the budget: %v", err)
	}
}

// TestResidentColumnsGrowOnce: a file whose first lines are longer than
// its average (here 6 %: a volume that shrinks by digits) is decoded into
// columns reserved once from the first lines, not reserved again near its
// end, which copied every bar so far (growFor's margin).
func TestResidentColumnsGrowOnce(t *testing.T) {
	const rows = 200_000
	var b strings.Builder
	b.WriteString("timestamp,symbol,open,high,low,close,volume\n")
	for i := range rows {
		vol := "7"
		if i < 300 {
			vol = "7000" // the first lines three bytes longer (6 %)
		}
		fmt.Fprintf(&b, "%d,SYM,100.25,101.50,99.75,100.50,%s\n", 1_700_000_000+60*i, vol)
	}
	path := writeTemp(t, "long-start.csv", []byte(b.String()))
	var set *Set
	got := allocated(func() {
		var err error
		if set, err = Open(context.Background(), []string{path}, Options{}); err != nil {
			t.Fatal(err)
		}
	})
	defer set.Close()
	if !set.Info().Resident {
		t.Fatal("the file was not decoded whole")
	}
	// What the scan reads (its chunks) and the columns once, with their
	// margin; the columns reserved again would be as much again.
	bound := uint64(b.Len()) + uint64(rows*(barBytes+8))*5/4
	if got > bound {
		t.Errorf("Open allocated %d bytes, over %d for a file of %d bytes: the columns were reserved again", got, bound, b.Len())
	}
}

// TestResidentColumnsFitTheirBars: files whose first lines are short and
// the rest long (prices written with a thousand zeros) are estimated at
// many more bars than they hold; their columns were reserved for those
// (up to the whole budget left) and kept so, uncharged, beside every later
// file's until the merge (the attacker's pass: a folder of 8 such files
// held 429 MB for a 64 MiB budget). Each file's columns now keep room for
// at most its bars and an eighth more.
func TestResidentColumnsFitTheirBars(t *testing.T) {
	const files, rows = 3, 5000
	dir := t.TempDir()
	var paths []string
	zeros := strings.Repeat("0", 1000)
	for f := range files {
		var b strings.Builder
		b.WriteString("timestamp,symbol,open,high,low,close,volume\n")
		for i := range rows {
			price := "100.5"
			if i >= 256 {
				price += zeros
			}
			fmt.Fprintf(&b, "%d,S%d,%s,101,99,%s,10\n", 1_700_000_000+60*i, f, price, price)
		}
		p := filepath.Join(dir, fmt.Sprintf("s%d.csv", f))
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var seen [][2]int
	set, err := Open(context.Background(), paths, Options{scan: scanTuning{decoded: func(bars, room int) {
		seen = append(seen, [2]int{bars, room})
	}}})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if !set.Info().Resident || len(seen) != files {
		t.Fatalf("resident %v, %d files decoded", set.Info().Resident, len(seen))
	}
	for i, s := range seen {
		if bars, room := s[0], s[1]; bars != rows || room > bars+bars/8+64 {
			t.Errorf("file %d: %d bars in columns with room for %d", i, bars, room)
		}
	}
}
