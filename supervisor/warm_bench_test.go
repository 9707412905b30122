package supervisor

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"stratbench/internal/testenv"
	pyb "stratbench/python"
)

// BenchmarkWarmStart measures a run's start, from the call that starts it
// (Fork, or Host.Start for a cold start) to its first hook's first line of
// output at the host (first-hook-ms/op), with a strategy that imports
// only the standard library and one that imports numpy (from the tests'
// virtual environment). ns/op is the whole cycle, until the run's tree is
// gone. template-MiB is the template's resident memory (the sum over its
// tree, as the supervisor counts it), run-MiB a run's at its first hook.
func BenchmarkWarmStart(b *testing.B) {
	for _, tc := range []struct{ name, strategy string }{
		{"stdlib", "warm/bench/stdlib.py"},
		{"numpy", "warm/bench/with_numpy.py"},
	} {
		py := python(b)
		if tc.name == "numpy" {
			py = venvPython(b, "numpy")
		}
		strategy := script(b, tc.strategy)
		env := warmEnv(b)
		b.Run(tc.name+"/cold", func(b *testing.B) {
			h := newHost(b)
			bridge, err := pyb.InstallBridge(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			benchmarkRuns(b, func() *worker { return startWorker(b, h, py, bridge, strategy, env, Limits{}) })
		})
		b.Run(tc.name+"/warm", func(b *testing.B) {
			h := newHost(b)
			tp := startTemplate(b, h, py, strategy, newCollector(), env)
			s := waitSample(b, tp.Process(), func(s Sample) bool { return s.MemoryBytes > 0 })
			benchmarkRuns(b, func() *worker { return forkWorker(b, tp, strategy, env, Limits{}) })
			// After the loop, which drops the metrics reported before it.
			b.ReportMetric(float64(s.MemoryBytes)/(1<<20), "template-MiB")
		})
	}
}

// benchmarkRuns starts runs with start, each until its first hook's output.
func benchmarkRuns(b *testing.B, start func() *worker) {
	var first time.Duration
	var mem int64
	for b.Loop() {
		begin := time.Now()
		w := start()
		w.manifest(b)
		w.firstHook(b)
		w.c.waitFor(b, "hook")
		first += time.Since(begin)
		if s, ok := <-w.p.Samples(); ok {
			mem += s.MemoryBytes
		}
		w.quit(b)
		w.close()
	}
	b.ReportMetric(float64(first.Microseconds())/1000/float64(b.N), "first-hook-ms/op")
	b.ReportMetric(float64(mem)/(1<<20)/float64(b.N), "run-MiB")
}

// venvPython is the tests' virtual environment's interpreter, which
// imports modules.
func venvPython(tb testing.TB, modules ...string) string {
	tb.Helper()
	if _, err := os.Stat(filepath.Join(filepath.Dir(script(tb, ".")), "..", "go.mod")); err != nil && os.Geteuid() != 0 {
		tb.Skip("run outside the repository (TestUnprivileged): no test environment")
	}
	return testenv.Python(tb, modules...)
}
