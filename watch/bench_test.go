package watch

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSaveToChange measures the time from the end of an in-place save
// to the Change that reports it, with the default options: about the
// debounce (a close does not end the wait: see the package comment), plus
// half a poll interval on average when polling.
func BenchmarkSaveToChange(b *testing.B) {
	for _, mode := range []struct {
		name string
		opts Options
	}{{"events", Options{}}, {"poll", Options{Poll: true}}} {
		b.Run(mode.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "strategy.py")
			w, err := New(path, mode.opts)
			if err != nil {
				b.Fatal(err)
			}
			runBench(b, w)
			<-w.Changes() // the initial Missing
			b.ResetTimer()
			interval := w.opts.PollInterval
			for i := range b.N {
				// Saves come at any moment, not in step with the poll ticker.
				b.StopTimer()
				time.Sleep(rand.N(interval))
				b.StartTimer()
				data := fmt.Appendf(nil, "# save %d\n", i)
				saveInPlace(b, path, data)
				for c := range w.Changes() {
					if c.Kind == Changed {
						break
					}
					b.Fatalf("got %s (%v) after a save", c.Kind, c.Err)
				}
			}
		})
	}
}

// BenchmarkRenameToChange measures the time from the rename of an atomic
// save (a temporary file written beside the strategy, then renamed over it,
// as bench/save_bench.py and many editors save) to the Change that reports
// it, with the default options, and reports the median, min and max over
// b.N saves (run it with -benchtime 20x).
func BenchmarkRenameToChange(b *testing.B) {
	path := filepath.Join(b.TempDir(), "strategy.py")
	write(b, path, []byte("# start\n"))
	w, err := New(path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	runBench(b, w)
	<-w.Changes() // the initial state
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		tmp := path + ".tmp"
		write(b, tmp, fmt.Appendf(nil, "# save %d\n", i))
		time.Sleep(2 * DefaultDebounce) // the previous save's debounce is over
		b.StartTimer()
		began := time.Now()
		if err := os.Rename(tmp, path); err != nil {
			b.Fatal(err)
		}
		c := <-w.Changes()
		took = append(took, time.Since(began))
		if c.Kind != Changed {
			b.Fatalf("got %s (%v) after a save", c.Kind, c.Err)
		}
	}
	b.StopTimer()
	slices.Sort(took)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(took[len(took)/2]), "ms-median")
	b.ReportMetric(ms(took[0]), "ms-min")
	b.ReportMetric(ms(took[len(took)-1]), "ms-max")
}

// BenchmarkIdleCPU measures the CPU time the whole test process uses per
// second while a watcher waits for a file that does not change; "none" is
// the same process without a watcher.
func BenchmarkIdleCPU(b *testing.B) {
	for _, mode := range []struct {
		name  string
		opts  *Options
		bytes int
	}{
		{"none", nil, 0},
		{"events", &Options{}, 4 << 10},
		{"poll/4KiB", &Options{Poll: true}, 4 << 10},
		{"poll/1MiB", &Options{Poll: true}, 1 << 20},
	} {
		b.Run(mode.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "strategy.py")
			write(b, path, bytes.Repeat([]byte("#"), mode.bytes))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if mode.opts != nil {
				w, err := New(path, *mode.opts)
				if err != nil {
					b.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- w.Run(ctx) }()
				defer func() { cancel(); <-done }()
				<-w.Changes()
			}
			const idle = time.Second
			b.ResetTimer()
			start := cpuTime(b)
			for range b.N {
				time.Sleep(idle)
			}
			used := cpuTime(b) - start
			b.ReportMetric(float64(used.Microseconds())/float64(b.N)/idle.Seconds(), "cpu-µs/s")
		})
	}
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPollCost measures one poll (a stat) and one content check (a
// hash, done when the stat changed and every few polls).
func BenchmarkPollCost(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20} {
		path := filepath.Join(b.TempDir(), "strategy.py")
		write(b, path, bytes.Repeat([]byte("#"), size))
		b.Run(fmt.Sprintf("stat/%dKiB", size>>10), func(b *testing.B) {
			for range b.N {
				if !statFile(path).exists {
					b.Fatal("stat failed")
				}
			}
		})
		b.Run(fmt.Sprintf("hash/%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(size))
			for range b.N {
				if _, err := hashFile(path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// runBench runs w until the benchmark ends.
func runBench(b *testing.B, w *Watcher) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	})
}
