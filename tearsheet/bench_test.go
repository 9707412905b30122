package tearsheet

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"stratbench/job"
)

// BenchmarkJobReport reads and writes the report of the job
// $STRATBENCH_BENCH_JOB of $STRATBENCH_HOME (e2e/report_bench_test.go makes a
// 1,000,000-bar one; docs/BENCHMARKS.md).
func BenchmarkJobReport(b *testing.B) {
	id, home := os.Getenv("STRATBENCH_BENCH_JOB"), os.Getenv("STRATBENCH_HOME")
	if id == "" || home == "" {
		b.Skip("set STRATBENCH_HOME and STRATBENCH_BENCH_JOB")
	}
	store := job.ReadStore(filepath.Clean(home))
	for b.Loop() {
		j, err := LoadJob(context.Background(), store, id)
		if err != nil {
			b.Fatal(err)
		}
		if err := WriteJob(io.Discard, j, Options{Version: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
}
