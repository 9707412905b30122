package supervisor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"stratbench/internal/leakcheck"
	"stratbench/supervisor/internal/procfs"
)

func TestMain(m *testing.M) {
	if d := os.Getenv(slowRunInitEnv); d != "" && isRunInit(os.Args) {
		startLikeALargerExecutable(d)
	}
	if d := os.Getenv(gatedRunInitEnv); d != "" && isRunInit(os.Args) {
		waitAtGate(d)
	}
	if msg := os.Getenv(failingRunInitEnv); msg != "" && isRunInit(os.Args) {
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(3)
	}
	MaybeRunInit()
	if stateFile := os.Getenv(fakeStratbenchEnv); stateFile != "" {
		os.Exit(fakeStratbench(stateFile))
	}
	os.Exit(leakcheck.Main(m, "stratbench/supervisor"))
}

// findPython resolves the real interpreter once: python3 on PATH may be a
// shim (pyenv's is a shell script that forks), which would add processes to
// every tree.
var findPython = sync.OnceValues(func() (string, error) {
	if p := os.Getenv("STRATBENCH_PYTHON"); p != "" {
		return p, nil
	}
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	return strings.TrimSpace(string(out)), err
})

func python(t testing.TB) string {
	t.Helper()
	p, err := findPython()
	if err != nil || p == "" {
		t.Skipf("no python3: %v", err)
	}
	return p
}

func script(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newHost(t testing.TB) *Host {
	t.Helper()
	h, err := NewHost()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// pySpecInline runs the source of a testdata script as python3 -c: with a
// private /tmp the tree cannot see files under the host's /tmp, where the
// unprivileged run keeps its copy of testdata.
func pySpecInline(t testing.TB, c *collector, name string, args ...string) Spec {
	src, err := os.ReadFile(script(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return Spec{
		Path:   python(t),
		Args:   append([]string{"-c", string(src)}, args...),
		Env:    []string{"PYTHONDONTWRITEBYTECODE=1"},
		Output: c.output,
	}
}

// pySpec runs a testdata script under the real interpreter.
func pySpec(t testing.TB, c *collector, name string, args ...string) Spec {
	return Spec{
		Path:   python(t),
		Args:   append([]string{script(t, name)}, args...),
		Env:    []string{"PYTHONDONTWRITEBYTECODE=1"},
		Output: c.output,
	}
}

func start(t testing.TB, h *Host, spec Spec) *Process {
	t.Helper()
	p, err := h.Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	return p
}

// collector keeps every captured line and lets a test wait for one.
type collector struct {
	mu    sync.Mutex
	lines []Line
	added chan struct{} // closed and replaced at every line
}

func newCollector() *collector { return &collector{added: make(chan struct{})} }

func (c *collector) output(l Line) {
	c.mu.Lock()
	c.lines = append(c.lines, l)
	close(c.added)
	c.added = make(chan struct{})
	c.mu.Unlock()
}

func (c *collector) snapshot() []Line {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.lines)
}

// waitFor returns the first line that starts with prefix.
func (c *collector) waitFor(t testing.TB, prefix string) Line {
	t.Helper()
	return c.waitForAny(t, prefix)
}

// waitForAny returns the first line that starts with one of the non-empty
// prefixes.
func (c *collector) waitForAny(t testing.TB, prefixes ...string) Line {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		c.mu.Lock()
		for _, l := range c.lines {
			for _, prefix := range prefixes {
				if prefix != "" && strings.HasPrefix(l.Text, prefix) {
					c.mu.Unlock()
					return l
				}
			}
		}
		added := c.added
		c.mu.Unlock()
		select {
		case <-added:
		case <-timeout:
			t.Fatalf("no line %q in %d lines: %v", prefixes, len(c.snapshot()), c.snapshot())
		}
	}
}

// waitPID waits for a line "prefix PID" and returns the pid.
func (c *collector) waitPID(t testing.TB, prefix string) int {
	t.Helper()
	l := c.waitFor(t, prefix+" ")
	pid, err := strconv.Atoi(strings.TrimPrefix(l.Text, prefix+" "))
	if err != nil {
		t.Fatalf("line %q: %v", l.Text, err)
	}
	return pid
}

// waitSample returns the first sample for which ok holds.
func waitSample(t testing.TB, p *Process, ok func(Sample) bool) Sample {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case s, open := <-p.Samples():
			if !open {
				t.Fatal("tree ended before the expected sample")
			}
			if ok(s) {
				return s
			}
		case <-timeout:
			t.Fatal("no expected sample within 30 s")
		}
	}
}

func lists(s Sample, pid int) bool {
	return slices.ContainsFunc(s.Procs, func(p Proc) bool { return p.PID == pid })
}

// identify returns pid's identity; the process must exist.
func identify(t testing.TB, pid int) ProcID {
	t.Helper()
	st, err := procfs.NewReader().Stat(pid)
	if err != nil {
		t.Fatalf("stat %d: %v", pid, err)
	}
	return ProcID{pid, st.StartTime}
}

// alive reports whether the process id names still runs (a zombie is dead).
func alive(id ProcID) bool {
	st, err := procfs.NewReader().Stat(id.PID)
	return err == nil && st.StartTime == id.Start && !st.Zombie()
}

// marked returns the live processes whose environment carries marker.
func marked(t testing.TB, marker string) []int {
	t.Helper()
	r := procfs.NewReader()
	pids, err := r.PIDs(nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, pid := range pids {
		if v, ok, err := r.Getenv(pid, EnvMarker); err == nil && ok && v == marker {
			if st, err := r.Stat(pid); err == nil && !st.Zombie() {
				out = append(out, pid)
			}
		}
	}
	return out
}

func waitDone(t testing.TB, p *Process, within time.Duration) Result {
	t.Helper()
	select {
	case <-p.Done():
		return p.Wait()
	case <-time.After(within):
		t.Fatalf("tree not done within %v", within)
		return Result{}
	}
}

// hostPIDOf returns the pid, as this process sees it, of the process of p's
// tree that its own namespace numbers nsPID (scripts print os.getpid(), which
// in a PID namespace is not our pid): a descendant of the tree's init whose
// NSpid, at the level of the init's own namespace, is nsPID.
func hostPIDOf(p *Process, nsPID int) (int, error) {
	if p.TreeTracking() == TrackingFallback {
		return nsPID, nil // the init is in our namespace
	}
	r := procfs.NewReader()
	initNS, err := r.NSPIDs(p.initPID, nil)
	if err != nil {
		return 0, fmt.Errorf("init %d: %w", p.initPID, err)
	}
	level := len(initNS) - 1 // the init's own namespace, where its descendants are numbered too
	pids, err := r.PIDs(nil)
	if err != nil {
		return 0, err
	}
	byParent := map[int][]int{}
	for _, pid := range pids {
		if st, err := r.Stat(pid); err == nil {
			byParent[st.PPID] = append(byParent[st.PPID], pid)
		}
	}
	queue := slices.Clone(byParent[p.initPID])
	var ns []int
	for len(queue) > 0 {
		pid := queue[0]
		queue = append(queue[1:], byParent[pid]...)
		if ns, err = r.NSPIDs(pid, ns[:0]); err == nil && len(ns) > level && ns[level] == nsPID {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no descendant of the init %d is %d in its namespace", p.initPID, nsPID)
}

// hostPID is hostPIDOf for tests.
func hostPID(t testing.TB, p *Process, nsPID int) int {
	t.Helper()
	pid, err := hostPIDOf(p, nsPID)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// waitEscapee waits for the line "escapee NSPID" and returns the escapee's
// identity, as this process sees it.
func waitEscapee(t testing.TB, c *collector, p *Process, prefix string) ProcID {
	t.Helper()
	return identify(t, hostPID(t, p, c.waitPID(t, prefix)))
}

// forEachTracking runs f in a subtest per tree tracking, with a Host created
// in it by newHost seeing TrackingEnv set accordingly. f gets the tracking
// that the subtest is for: with "auto", a system that refuses namespaces
// gives the fallback, and f should skip (see startIn).
func forEachTracking(t *testing.T, f func(t *testing.T, want TreeTracking)) {
	for _, tc := range []struct {
		want TreeTracking
		env  string
	}{{TrackingPIDNamespace, "auto"}, {TrackingFallback, "fallback"}} {
		t.Run(tc.want.String(), func(t *testing.T) {
			t.Setenv(TrackingEnv, tc.env)
			f(t, tc.want)
		})
	}
}

// startIn starts spec and skips the test if the tree's tracking is not want
// (namespaces refused by this system).
func startIn(t testing.TB, h *Host, spec Spec, want TreeTracking) *Process {
	t.Helper()
	p := start(t, h, spec)
	if got := p.TreeTracking(); got != want {
		p.Kill()
		t.Skipf("tree tracking is %s on this system, not %s", got, want)
	}
	return p
}

func itoa(n int) string { return strconv.Itoa(n) }
