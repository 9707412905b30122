package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"stratbench/job"
	"stratbench/sandbox"
)

// BenchmarkPoolRun measures what a job of a sweep costs, started cold
// (Start) and warm (a Pool of one slot), plain and in the sandbox, with the
// numpy example strategy over 500 bars of the bundled sample, params
// changing from job to job. ns/op is a whole job, from Start to its saved
// report; overhead-ms/op is that less the time the strategy's hooks took
// (the worker's start, the imports, the job folder, the protocol): what a
// sweep pays per run besides the strategy's own work. The pool's first
// job starts its template; it is paid before the timer starts.
//
//	go test -run '^$' -bench BenchmarkPoolRun -benchtime 20x ./engine
func BenchmarkPoolRun(b *testing.B) {
	py := interpreter(b, "numpy")
	for _, sandboxed := range []bool{false, true} {
		if sandboxed && sandbox.Check() != nil {
			continue
		}
		for _, warm := range []bool{false, true} {
			name := map[bool]string{false: "plain", true: "sandbox"}[sandboxed] + "/" + map[bool]string{false: "cold", true: "warm"}[warm]
			b.Run(name, func(b *testing.B) {
				cfg, _ := poolConfig(b, py, "python/example/numpy_strategy.py", job.DefaultLimits())
				cfg.Sandbox = sandboxed
				start := func(ctx context.Context, cfg Config) (*Job, error) { return Start(ctx, cfg, sampleDriver(b, 500)) }
				if warm {
					pool := newPool(b, cfg, 1)
					start = func(ctx context.Context, cfg Config) (*Job, error) { return pool.Start(ctx, cfg, sampleDriver(b, 500)) }
					j, err := start(context.Background(), cfg)
					if err != nil {
						b.Fatal(err)
					}
					waitJob(b, j)
					defer func() {
						st := pool.Stats()
						b.ReportMetric(float64(st.Warm), "warm-starts")
					}()
				}
				var overhead time.Duration
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					c := cfg
					c.Params = []string{fmt.Sprintf("fast=%d", 3+i%8)}
					begin := time.Now()
					j, err := start(context.Background(), c)
					if err != nil {
						b.Fatal(err)
					}
					rep := waitJob(b, j)
					took := time.Since(begin)
					if rep.Status != job.StatusPassed {
						b.Fatalf("%s: %+v", rep.Status, rep.Failure)
					}
					var hooks float64
					for _, s := range rep.Hooks {
						hooks += s.TotalMS
					}
					overhead += took - time.Duration(hooks*float64(time.Millisecond))
				}
				b.ReportMetric(float64(overhead.Microseconds())/1000/float64(b.N), "overhead-ms/op")
			})
		}
	}
}
