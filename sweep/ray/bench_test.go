package ray

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"stratbench/internal/testenv"
)

// BenchmarkBuildPackage builds a typical code package: stratbench's size of
// binary (the test binary), the example strategy, and a week of minute bars
// for three symbols (about 1.9 MiB of CSV).
func BenchmarkBuildPackage(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	data := writeWeekCSV(b)
	spec := PackageSpec{Binary: exe, Strategy: filepath.Join(testenv.Root(b), "python", "example"), Data: []string{data}}
	var size int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pkg, err := BuildPackage(context.Background(), spec, b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		size = pkg.Size
	}
	b.ReportMetric(float64(size)/(1<<20), "MiB")
}

// writeWeekCSV writes a week of minute bars for three symbols (about 1.9
// MiB) and returns its path.
func writeWeekCSV(tb testing.TB) string {
	tb.Helper()
	data := filepath.Join(tb.TempDir(), "week.csv")
	f, err := os.Create(data)
	if err != nil {
		tb.Fatal(err)
	}
	fmt.Fprintln(f, "time,symbol,open,high,low,close,volume")
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	for m := 0; m < 7*24*60; m++ {
		for i, sym := range []string{"BTC", "ETH", "SOL"} {
			p := 100.0*float64(i+1) + float64(m%97)/10
			fmt.Fprintf(f, "%s,%s,%.2f,%.2f,%.2f,%.2f,%d\n", start.Add(time.Duration(m)*time.Minute).Format(time.RFC3339), sym, p, p+0.5, p-0.5, p+0.1, 1000+m%500)
		}
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return data
}
