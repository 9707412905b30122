package data

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// pqBar is a bar as parquet-go writes it: a second writer besides pyarrow.
type pqBar struct {
	Timestamp int64   `parquet:"timestamp,timestamp(nanosecond:utc)"`
	Symbol    string  `parquet:"symbol,dict"`
	Open      float64 `parquet:"open"`
	High      float64 `parquet:"high"`
	Low       float64 `parquet:"low"`
	Close     float64 `parquet:"close"`
	Volume    float64 `parquet:"volume"`
}

// writeBenchData writes n one-minute bars of two symbols, interleaved, as
// CSV and as Parquet (parquet-go's writer: snappy, dictionary symbols,
// row groups of 1Mi rows) in dir.
func writeBenchData(tb testing.TB, dir string, n int) (csvPath, pqPath string) {
	tb.Helper()
	csvPath, pqPath = filepath.Join(dir, "bars.csv"), filepath.Join(dir, "bars.parquet")
	cf, err := os.Create(csvPath)
	if err != nil {
		tb.Fatal(err)
	}
	pf, err := os.Create(pqPath)
	if err != nil {
		tb.Fatal(err)
	}
	cw := bufio.NewWriterSize(cf, 1<<20)
	pw := parquet.NewGenericWriter[pqBar](pf, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(1<<20))
	cw.WriteString(header)
	price := [2]float64{100, 40}
	var x uint64 = 1
	batch := make([]pqBar, 0, 4096)
	line := make([]byte, 0, 128)
	for i := range n {
		s := i % 2
		x = x*6364136223846793005 + 1442695040888963407
		open := price[s]
		price[s] = round2(price[s] * (1 + (float64(x>>11)/(1<<53)-0.5)*0.002))
		bar := pqBar{Timestamp: testStart.UnixNano() + int64(i/2)*int64(time.Minute), Symbol: "SYM" + strconv.Itoa(s),
			Open: open, High: round2(max(open, price[s]) + 0.01), Low: round2(min(open, price[s]) - 0.01), Close: price[s],
			Volume: float64(100 + x>>54)}
		batch = append(batch, bar)
		line = append(line[:0], formatTime(bar.Timestamp)...)
		line = append(line, ',')
		line = append(line, bar.Symbol...)
		for _, v := range []float64{bar.Open, bar.High, bar.Low, bar.Close, bar.Volume} {
			line = append(line, ',')
			line = strconv.AppendFloat(line, v, 'f', -1, 64)
		}
		line = append(line, '\n')
		cw.Write(line)
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := pw.Write(batch); err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := pw.Close(); err != nil {
		tb.Fatal(err)
	}
	for _, err := range []error{cw.Flush(), cf.Close(), pf.Close()} {
		if err != nil {
			tb.Fatal(err)
		}
	}
	return csvPath, pqPath
}

// TestParquetGoWriter checks files of another writer than pyarrow: V2
// pages, a page index, parquet-go's own dictionary and timestamp layout.
func TestParquetGoWriter(t *testing.T) {
	csvPath, pqPath := writeBenchData(t, t.TempDir(), 30_000)
	for _, mode := range modes {
		w := Window{From: testStart.Add(1000 * time.Minute), To: testStart.Add(9000 * time.Minute)}
		for _, w := range []Window{{}, w} {
			ps, pb := replay(t, []string{pqPath}, Options{Window: w, Budget: mode.budget})
			cs, cb := replay(t, []string{csvPath}, Options{Window: w, Budget: mode.budget})
			sameReplay(t, mode.name+" "+w.String(), ps, pb, cs, cb)
		}
	}
}

// BenchmarkReplay opens a million bars and replays them the way a driver
// does, from CSV and Parquet, decoded in memory (the default budget) and
// streamed. ns/bar is the whole cost: open, checks, replay and digest.
func BenchmarkReplay(b *testing.B) {
	const n = 1_000_000
	csvPath, pqPath := writeBenchData(b, b.TempDir(), n)
	for _, file := range []struct{ name, path string }{{"csv", csvPath}, {"parquet", pqPath}} {
		for _, mode := range modes {
			b.Run(file.name+"/"+mode.name, func(b *testing.B) {
				for b.Loop() {
					ctx := context.Background()
					s, err := Open(ctx, []string{file.path}, Options{Budget: mode.budget})
					if err != nil {
						b.Fatal(err)
					}
					st, err := s.Stream(ctx)
					if err != nil {
						b.Fatal(err)
					}
					for pos := 0; pos < n; {
						bars, first, err := st.Fill(pos + 1<<16)
						if err != nil {
							b.Fatal(err)
						}
						pos = min(first+bars.Len(), pos+4096)
						st.Release(pos)
					}
					st.Close()
					if _, err := s.Digest(ctx); err != nil {
						b.Fatal(err)
					}
					s.Close()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/bar")
			})
		}
	}
}

// BenchmarkRerun is what watch mode pays per re-run on data that did not
// change, a million bars from CSV and Parquet, decoded (the default
// budget) and streamed: "reopen" opens the data again and replays it,
// "stale" asks the set it has whether its files changed (Set.Stale:
// their size and time, the content hashed again when it was modified in
// the last two seconds, "stale-recent") and replays it. ns/bar is the
// whole cost of one re-run's data.
func BenchmarkRerun(b *testing.B) {
	const n = 1_000_000
	csvPath, pqPath := writeBenchData(b, b.TempDir(), n)
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{csvPath, pqPath} {
		if err := os.Chtimes(p, old, old); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	replayAll := func(b *testing.B, s *Set) {
		st, err := s.Stream(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		for pos := 0; pos < n; {
			bars, first, err := st.Fill(pos + 1<<16)
			if err != nil {
				b.Fatal(err)
			}
			pos = min(first+bars.Len(), pos+4096)
			st.Release(pos)
		}
	}
	for _, file := range []struct{ name, path string }{{"csv", csvPath}, {"parquet", pqPath}} {
		for _, mode := range modes {
			open := func(b *testing.B) *Set {
				s, err := Open(ctx, []string{file.path}, Options{Budget: mode.budget})
				if err != nil {
					b.Fatal(err)
				}
				return s
			}
			b.Run(file.name+"/"+mode.name+"/reopen", func(b *testing.B) {
				for b.Loop() {
					s := open(b)
					replayAll(b, s)
					s.Close()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/bar")
			})
			for _, recent := range []bool{false, true} {
				name := "stale"
				if recent {
					name = "stale-recent"
				}
				b.Run(file.name+"/"+mode.name+"/"+name, func(b *testing.B) {
					s := open(b)
					defer s.Close()
					if recent {
						s.openedAt = time.Now().Add(-time.Hour) // as if the file was saved since
						now := time.Now()
						defer os.Chtimes(file.path, old, old)
						if err := os.Chtimes(file.path, now, now); err != nil {
							b.Fatal(err)
						}
						s.srcs[0].modTime = now
					}
					for b.Loop() {
						if s.Stale() != (recent && file.name == "parquet") {
							b.Fatalf("stale %v", s.Stale())
						}
						replayAll(b, s)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/bar")
				})
			}
		}
	}
}
