package supervisor

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/internal/units"
)

// benchTree starts procs.py with n processes and returns its tree without a
// supervise goroutine, so that a benchmark can drive sampling itself.
func benchTree(b *testing.B, n int) *tree {
	h := newHost(b)
	c := newCollector()
	t, err := h.startTree(context.Background(), pySpec(b, c, "procs.py", strconv.Itoa(n)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		t.kill()
		t.resetters.Wait()
		h.forget(t)
		t.closeFDs()
	})
	c.waitFor(b, "ready")
	t.sample(time.Now(), true)
	if s := <-t.proc.samples; s.Processes != n {
		b.Fatalf("tree has %d processes, want %d", s.Processes, n)
	}
	return t
}

// BenchmarkSample measures one sample of a 32-process Python tree: the walk
// over children files, status reads and peak resets. cpu-ns/op is the CPU
// time of this process (all threads), which stays meaningful when other
// work competes for the CPUs and stretches ns/op.
func BenchmarkSample(b *testing.B) {
	benchSample(b, false)
}

// BenchmarkSampleFullScan is BenchmarkSample plus the scan of all of /proc
// that runs about once a second.
func BenchmarkSampleFullScan(b *testing.B) {
	benchSample(b, true)
}

func benchSample(b *testing.B, full bool) {
	t := benchTree(b, 32)
	before := cpuTime(b)
	for b.Loop() {
		t.sample(time.Now(), full)
	}
	b.ReportMetric(float64(cpuTime(b)-before)/float64(b.N), "cpu-ns/op")
}

func cpuTime(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestMeasure measures how far fast allocations overshoot the real 2 GiB
// limit before the kill, and how long kills take. It runs only with
// STRATBENCH_MEASURE=1 and logs its numbers (go test -v).
func TestMeasure(t *testing.T) {
	if os.Getenv("STRATBENCH_MEASURE") != "1" {
		t.Skip("set STRATBENCH_MEASURE=1 to measure")
	}
	const runs = 5
	shm := filepath.Join("/dev/shm", fmt.Sprintf("stratbench-measure-%d", os.Getpid()))
	f, err := os.Create(shm)
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(shm)
	// Allocates the tmpfs pages and touches them once up front: mapping
	// them later is far faster (≈15 GiB/s here) than faulting in fresh
	// anonymous memory.
	if err := unix.Fallocate(int(f.Fd()), 0, 0, 3<<30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// In a child: a child's ru_maxrss starts from its parent's peak (Go
	// forks with CLONE_VM), so this process must stay small.
	if out, err := exec.Command(python(t), script(t, "mmap_alloc.py"), "3", shm).CombinedOutput(); err != nil {
		t.Fatalf("warm-up: %v: %s", err, out)
	}
	h := newHost(t)
	for _, tc := range []struct{ name, size, file string }{
		{"anonymous MAP_POPULATE 3 GiB", "3", ""},
		{"tmpfs MAP_POPULATE 3 GiB", "3", shm},
	} {
		for run := range runs {
			c := newCollector()
			args := []string{tc.size}
			if tc.file != "" {
				args = append(args, tc.file)
			}
			spec := pySpec(t, c, "mmap_alloc.py", args...)
			spec.Limits.MemoryBytes = 2 << 30
			p := start(t, h, spec)
			mapping := c.waitFor(t, "mapping")
			res := waitDone(t, p, 2*time.Minute)
			v := res.Violation
			if v == nil {
				t.Fatalf("%s: no violation", tc.name)
			}
			rate := "n/a"
			if mapped := slices.IndexFunc(c.snapshot(), func(l Line) bool { return l.Text == "mapped" }); mapped < 0 {
				rate = fmt.Sprintf("%.2f GiB/s", float64(v.Value)/(1<<30)/v.Time.Sub(mapping.Time).Seconds())
			}
			t.Logf("%s run %d: limit hit at %s, peak seen (sampled, and at the kill) %s, root ru_maxrss %s, rate until the limit %s, kill %v",
				tc.name, run+1, units.Bytes(v.Value), units.Bytes(res.PeakMemoryBytes),
				units.Bytes(p.rootRusage.Maxrss<<10), rate, p.killTook.Round(time.Millisecond))
		}
	}
	for run := range runs {
		c := newCollector()
		p := start(t, h, pySpec(t, c, "procs.py", "32"))
		c.waitFor(t, "ready")
		waitSample(t, p, func(s Sample) bool { return s.Processes == 32 })
		begin := time.Now()
		p.Kill()
		t.Logf("32 sleeping processes run %d: Kill returned after %v", run+1, time.Since(begin).Round(100*time.Microsecond))
	}
	for run := range runs {
		c := newCollector()
		p := start(t, h, pySpec(t, c, "bomb.py"))
		c.waitFor(t, "bombing")
		s := waitSample(t, p, func(s Sample) bool { return s.Processes >= 20 })
		begin := time.Now()
		p.Kill()
		t.Logf("fork loop of setsid'd orphans run %d: %d processes at the last sample, Kill returned after %v",
			run+1, s.Processes, time.Since(begin).Round(100*time.Microsecond))
	}
}

// BenchmarkStart measures a tree's start: from Start to the program's first
// line of output (first-line-ms/op), with the init in each tree tracking,
// beside a direct start without the init (os/exec with a new session and a
// parent-death signal, as the supervisor started programs before). ns/op is
// the whole cycle, until the tree is gone.
func BenchmarkStart(b *testing.B) {
	for _, prog := range []struct {
		name string
		path string
		args []string
	}{{"echo", "/bin/echo", []string{"hi"}}, {"python", python(b), []string{"-c", "print('hi')"}}} {
		b.Run(prog.name+"/direct", func(b *testing.B) {
			var first time.Duration
			for b.Loop() {
				begin := time.Now()
				cmd := exec.Command(prog.path, prog.args...)
				cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
				out, err := cmd.StdoutPipe()
				if err != nil {
					b.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
					b.Fatal(err)
				}
				first += time.Since(begin)
				cmd.Wait()
			}
			b.ReportMetric(float64(first.Microseconds())/float64(b.N), "first-line-µs/op")
		})
		for _, tc := range []struct {
			want TreeTracking
			env  string
		}{{TrackingPIDNamespace, "auto"}, {TrackingFallback, "fallback"}} {
			b.Run(prog.name+"/"+tc.want.String(), func(b *testing.B) {
				b.Setenv(TrackingEnv, tc.env)
				h := newHost(b)
				var first time.Duration
				for b.Loop() {
					line := make(chan struct{}, 1)
					begin := time.Now()
					p, err := h.Start(context.Background(), Spec{Path: prog.path, Args: prog.args, Env: []string{},
						Output: func(Line) {
							select {
							case line <- struct{}{}:
							default:
							}
						}})
					if err != nil {
						b.Fatal(err)
					}
					if p.TreeTracking() != tc.want {
						b.Skipf("tree tracking %s here", p.TreeTracking())
					}
					<-line
					first += time.Since(begin)
					p.Wait()
				}
				b.ReportMetric(float64(first.Microseconds())/float64(b.N), "first-line-µs/op")
			})
		}
	}
}
