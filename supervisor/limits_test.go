package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"stratbench/internal/units"
)

// TestFileSizeLimitAtStart: Spec.FileSizeBytes stops the program and its
// children at that size.
func TestFileSizeLimitAtStart(t *testing.T) {
	forEachTracking(t, func(t *testing.T, want TreeTracking) {
		h := newHost(t)
		dir := t.TempDir()
		c := newCollector()
		spec := pySpec(t, c, "write_file.py", dir, "2097152")
		spec.FileSizeBytes = 1 << 20
		p := startIn(t, h, spec, want)
		for _, who := range []string{"root", "child"} {
			c.waitFor(t, "efbig "+who+" 1048576")
			if fi, err := os.Stat(filepath.Join(dir, who)); err != nil || fi.Size() != 1<<20 {
				t.Errorf("%s's file: %v, %v; want 1 MiB", who, fi, err)
			}
		}
		if res := waitDone(t, p, 30*time.Second); res.ExitCode != 0 {
			t.Errorf("write_file.py exited %d: %v", res.ExitCode, c.snapshot())
		}
	})
}

// TestSetFileSizeLimit lowers the limit of a running tree: the program and
// the child it forked before both stop at the new size.
func TestSetFileSizeLimit(t *testing.T) {
	forEachTracking(t, func(t *testing.T, want TreeTracking) {
		h := newHost(t)
		dir := t.TempDir()
		goFile := filepath.Join(t.TempDir(), "go")
		c := newCollector()
		p := startIn(t, h, pySpec(t, c, "write_file.py", dir, "1048576", goFile), want)
		c.waitFor(t, "ready")
		waitSample(t, p, func(s Sample) bool { return s.Processes == 2 })
		if err := p.SetFileSizeLimit(-1); err == nil {
			t.Error("SetFileSizeLimit(-1) succeeded")
		}
		if err := p.SetFileSizeLimit(256 << 10); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goFile, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		c.waitFor(t, "efbig root 262144")
		c.waitFor(t, "efbig child 262144")
		waitDone(t, p, 30*time.Second)
		if err := p.SetFileSizeLimit(1 << 20); err == nil {
			t.Error("SetFileSizeLimit after the tree ended succeeded")
		}
	})
}

// TestPrivateTmp: the tree's /tmp is a tmpfs of its own, of the size asked
// for, invisible on the host, and what it holds counts as the tree's memory.
func TestPrivateTmp(t *testing.T) {
	t.Setenv(TrackingEnv, "auto")
	h := newHost(t)
	name := fmt.Sprintf("stratbench-private-%d", time.Now().UnixNano())
	t.Run("full", func(t *testing.T) {
		c := newCollector()
		spec := pySpecInline(t, c, "tmp_fill.py", "32", name)
		spec.PrivateTmpBytes = 16 << 20
		p := startIn(t, h, spec, TrackingPIDNamespace)
		if l := c.waitForAny(t, "enospc", "wrote"); l.Text != "enospc 16" {
			t.Errorf("filling a 16 MiB /tmp with 32 MiB: %q, want enospc after 16 MiB", l.Text)
		}
		if _, err := os.Stat(filepath.Join("/tmp", name)); !os.IsNotExist(err) {
			t.Errorf("the private file shows in the host's /tmp: %v", err)
		}
		// The samples taken while it wrote saw less.
		s := waitSample(t, p, func(s Sample) bool { return s.TmpBytes >= 15<<20 })
		if s.TmpBytes > 17<<20 || s.MemoryBytes < s.TmpBytes+1<<20 {
			t.Errorf("sample: /tmp %s, memory %s; want about 16 MiB in /tmp, counted in the memory", units.Bytes(s.TmpBytes), units.Bytes(s.MemoryBytes))
		}
	})
	t.Run("counts toward the memory limit", func(t *testing.T) {
		c := newCollector()
		spec := pySpecInline(t, c, "tmp_fill.py", "150", name)
		spec.PrivateTmpBytes = 256 << 20
		spec.Limits.MemoryBytes = 100 << 20
		p := startIn(t, h, spec, TrackingPIDNamespace)
		res := waitDone(t, p, 30*time.Second)
		v := res.Violation
		if v == nil || v.Kind != ViolationMemory || !strings.Contains(v.Message, "in its private /tmp") {
			t.Fatalf("violation %+v, want memory counting the private /tmp", v)
		}
		if res.PeakMemoryBytes <= 100<<20 {
			t.Errorf("peak %s, want over the 100 MiB limit", units.Bytes(res.PeakMemoryBytes))
		}
	})
	t.Run("working directory under the host's /tmp", func(t *testing.T) {
		dir, err := os.MkdirTemp("/tmp", "stratbench-cwd-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		if err := os.WriteFile(filepath.Join(dir, "here"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		c := newCollector()
		p := startIn(t, h, Spec{Path: python(t), Args: []string{"-c", "import os; print('cwd', sorted(os.listdir('.')))"},
			Env: []string{}, Dir: dir, PrivateTmpBytes: 1 << 20, Output: c.output}, TrackingPIDNamespace)
		if res := waitDone(t, p, 30*time.Second); res.ExitCode != 0 {
			t.Fatalf("exit %d: %v", res.ExitCode, c.snapshot())
		}
		if l := c.waitFor(t, "cwd"); l.Text != "cwd ['here']" {
			t.Errorf("the program's working directory holds %q, want the host's folder with its file", l.Text)
		}
	})
	t.Run("paths kept from the host's /tmp", func(t *testing.T) {
		dir, err := os.MkdirTemp("/tmp", "stratbench-kept-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		ro, rw := filepath.Join(dir, "ro"), filepath.Join(dir, "ro", "rw")
		if err := os.MkdirAll(rw, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ro, "seen"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		hidden := filepath.Join(dir, "hidden")
		if err := os.WriteFile(hidden, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		src := `import os, sys
ro, rw, hidden = sys.argv[1:]
print("seen", os.path.exists(os.path.join(ro, "seen")), "hidden", os.path.exists(hidden), flush=True)
try:
    open(os.path.join(ro, "new"), "w")
    print("ro writable", flush=True)
except OSError as e:
    print("ro", e.errno == 30, flush=True)
open(os.path.join(rw, "out"), "w").write("y")
print("rw ok", flush=True)
`
		c := newCollector()
		p := startIn(t, h, Spec{Path: python(t), Args: []string{"-c", src, ro, rw, hidden}, Env: []string{},
			PrivateTmpBytes: 1 << 20, TmpMounts: []TmpMount{{Path: rw, Writable: true}, {Path: ro}},
			Output: c.output}, TrackingPIDNamespace)
		if res := waitDone(t, p, 30*time.Second); res.ExitCode != 0 {
			t.Fatalf("exit %d: %v", res.ExitCode, c.snapshot())
		}
		for _, want := range []string{"seen True hidden False", "ro True", "rw ok"} {
			if l := c.waitFor(t, strings.Fields(want)[0]); l.Text != want {
				t.Errorf("got %q, want %q", l.Text, want)
			}
		}
		if b, err := os.ReadFile(filepath.Join(rw, "out")); err != nil || string(b) != "y" {
			t.Errorf("the file written through the writable path: %q, %v", b, err)
		}
	})
	t.Run("refused in the fallback", func(t *testing.T) {
		t.Setenv(TrackingEnv, "fallback")
		h := newHost(t)
		spec := Spec{Path: "/bin/true", PrivateTmpBytes: 1 << 20}
		if p, err := h.Start(context.Background(), spec); err == nil {
			p.Kill()
			t.Fatal("a private /tmp started in the fallback")
		} else if !errors.Is(err, ErrPrivateTmpUnavailable) || !strings.Contains(err.Error(), "PID-namespace") {
			t.Errorf("error %q does not say a PID namespace is needed", err)
		}
	})
}

// TestTaskLimit: threads count toward Limits.Tasks. A thread leak in one
// process, slow or as fast as it goes, is a processes violation that says
// threads; in a PID namespace (on a kernel that keeps pid_max per
// namespace) the tree never passes its task ceiling.
func TestTaskLimit(t *testing.T) {
	const limit = 100
	forEachTracking(t, func(t *testing.T, want TreeTracking) {
		for _, mode := range []string{"leak", "burst"} {
			t.Run(mode, func(t *testing.T) {
				h := newHost(t)
				c := newCollector()
				spec := pySpec(t, c, "threads.py", mode)
				spec.Limits = Limits{Processes: 4, Tasks: limit}
				p := startIn(t, h, spec, want)
				res := waitDone(t, p, 30*time.Second)
				v := res.Violation
				if v == nil || v.Kind != ViolationProcesses || v.Limit != limit || !strings.Contains(v.Message, "tasks (threads included) in 1 process, over the 100-task limit") {
					t.Fatalf("violation %+v, want a processes violation over %d tasks", v, limit)
				}
				if res.PeakProcesses != 1 || res.PeakTasks <= limit {
					t.Errorf("peaks: %d processes, %d tasks; want 1 process and over %d tasks", res.PeakProcesses, res.PeakTasks, limit)
				}
				t.Logf("%s", v.Message)
				ceiling := 0
				if want == TrackingPIDNamespace && h.pidMaxNS {
					ceiling = taskCeiling(pidMaxFor(limit))
				}
				if res.TaskCeiling != ceiling || ceiling > 0 && res.PeakTasks > ceiling {
					t.Errorf("task ceiling %d, peak %d tasks; want the ceiling %d, never passed", res.TaskCeiling, res.PeakTasks, ceiling)
				}
			})
		}
	})
}

// TestTaskCeiling: the kernel refuses new tasks at the tree's ceiling,
// whatever the samples see (here: none after the first), and lets the tree
// pass its limit by one.
func TestTaskCeiling(t *testing.T) {
	const limit = 100
	t.Setenv(TrackingEnv, "auto")
	h := newHost(t)
	if !h.pidMaxNS {
		t.Skip("pid_max is not per PID namespace on this kernel (Linux 6.14)")
	}
	c := newCollector()
	spec := pySpec(t, c, "threads.py", "ceiling")
	spec.Limits = Limits{Tasks: limit}
	spec.SampleInterval = time.Hour
	p := startIn(t, h, spec, TrackingPIDNamespace)
	res := waitDone(t, p, 30*time.Second)
	var started int
	l := c.waitFor(t, "refused after ")
	if _, err := fmt.Sscanf(l.Text, "refused after %d threads", &started); err != nil || started+1 <= limit || started+1 > res.TaskCeiling {
		t.Errorf("%q: want the kernel's refusal past %d tasks and at most at %d", l.Text, limit, res.TaskCeiling)
	}
	if res.ExitCode != 0 || res.TaskCeiling != taskCeiling(pidMaxFor(limit)) {
		t.Errorf("exit %d, task ceiling %d; want 0 and %d", res.ExitCode, res.TaskCeiling, taskCeiling(pidMaxFor(limit)))
	}
	t.Logf("%s; ceiling %d", l.Text, res.TaskCeiling)
}

func TestKernelAtLeast(t *testing.T) {
	for _, c := range []struct {
		release string
		want    bool
	}{
		{"6.14.0", true}, {"6.18.44-fc-v1272", true}, {"7.0.1", true}, {"6.13.12-arch1-1", false},
		{"5.15.0-91-generic", false}, {"6.14-rc1", true}, {"6", false}, {"", false}, {"x.y", false},
	} {
		if got := kernelAtLeast(c.release, 6, 14); got != c.want {
			t.Errorf("kernelAtLeast(%q, 6, 14) = %v, want %v", c.release, got, c.want)
		}
	}
}

// TestTaskLimitAtStop: a tree over its task limit when it is stopped, which
// no sample saw (here: none after the first), has broken it all the same.
func TestTaskLimitAtStop(t *testing.T) {
	forEachTracking(t, func(t *testing.T, want TreeTracking) {
		h := newHost(t)
		c := newCollector()
		spec := pySpecInline(t, c, "threads.py", "leak")
		spec.Args = []string{"-c", `import threading, time
hold = threading.Event()
for _ in range(150):
    threading.Thread(target=hold.wait, daemon=True).start()
print("holding", flush=True)
time.sleep(300)`}
		spec.Limits = Limits{Tasks: 100}
		spec.SampleInterval = time.Hour
		p := startIn(t, h, spec, want)
		c.waitFor(t, "holding")
		p.Kill()
		res := p.Wait()
		if v := res.Violation; v == nil || v.Kind != ViolationProcesses || !strings.HasSuffix(v.Message, "over the 100-task limit (seen as the tree was stopped)") {
			t.Fatalf("violation %+v, want the task limit seen at the stop", v)
		}
		if res.PeakTasks != 151 {
			t.Errorf("peak %d tasks, want 151", res.PeakTasks)
		}
	})
}

// TestCheck: Process.Check samples the tree at once and enforces the limits
// on that sample.
func TestCheck(t *testing.T) {
	t.Setenv(TrackingEnv, "auto")
	h := newHost(t)
	c := newCollector()
	spec := pySpecInline(t, c, "threads.py", "leak")
	spec.Args = []string{"-c", `import threading, time
hold = threading.Event()
for _ in range(150):
    threading.Thread(target=hold.wait, daemon=True).start()
print("holding", flush=True)
time.sleep(300)`}
	spec.Limits = Limits{Tasks: 100}
	spec.SampleInterval = time.Hour
	p := start(t, h, spec)
	c.waitFor(t, "holding")
	p.Check()
	res := waitDone(t, p, 30*time.Second)
	if v := res.Violation; v == nil || v.Kind != ViolationProcesses || !strings.HasSuffix(v.Message, "over the 100-task limit") {
		t.Fatalf("violation %+v, want the task limit, found by the check", v)
	}
	p.Check() // after the end: returns at once
}
