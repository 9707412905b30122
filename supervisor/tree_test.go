package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/internal/units"
	"stratbench/supervisor/internal/procfs"
)

func TestChildGetsOnlyWhatSpecGives(t *testing.T) {
	// An fd without close-on-exec, as if stratbench had inherited it.
	leak, err := unix.Open("/dev/null", unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(leak)
	t.Setenv("STRATBENCH_TEST_SECRET", "must not reach the child")
	h := newHost(t)

	r1, w1, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	defer w1.Close()
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	defer w2.Close()
	dir := t.TempDir()
	c := newCollector()
	spec := pySpec(t, c, "probe.py")
	spec.Env = []string{"A=1", "B=two words"}
	spec.Dir = dir
	spec.ExtraFiles = []*os.File{r1, w2}
	res := waitDone(t, start(t, h, spec), 30*time.Second)
	if res.ExitCode != 0 {
		t.Fatalf("probe exited %d: %v", res.ExitCode, c.snapshot())
	}
	var got struct {
		Env       map[string]string
		FDs       []int
		Kinds     map[string]string
		Stdin     string
		StdoutIno uint64 `json:"stdout_ino"`
		StderrIno uint64 `json:"stderr_ino"`
		SID, PID  int
		PGID      int
		CWD       string
	}
	if err := json.Unmarshal([]byte(c.waitFor(t, "{").Text), &got); err != nil {
		t.Fatal(err)
	}
	marker := got.Env[EnvMarker]
	if !strings.HasPrefix(marker, strconv.Itoa(os.Getpid())+".") {
		t.Errorf("marker %q does not name this process", marker)
	}
	wantEnv := map[string]string{"A": "1", "B": "two words", EnvMarker: marker}
	if len(got.Env) != len(wantEnv) || got.Env["A"] != "1" || got.Env["B"] != "two words" {
		t.Errorf("child environment %v, want exactly %v", got.Env, wantEnv)
	}
	if !slices.Equal(got.FDs, []int{0, 1, 2, 3, 4}) {
		t.Errorf("child fds %v, want 0-4 (the inherited fd %d must not leak)", got.FDs, leak)
	}
	for _, fd := range []string{"1", "2", "3", "4"} {
		if got.Kinds[fd] != "fifo" {
			t.Errorf("fd %s is %q, want a pipe", fd, got.Kinds[fd])
		}
	}
	if got.Stdin != "/dev/null" {
		t.Errorf("stdin is %q", got.Stdin)
	}
	if got.StdoutIno == got.StderrIno {
		t.Error("stdout and stderr are the same pipe")
	}
	if got.SID != got.PID || got.PGID != got.PID {
		t.Errorf("sid %d pgid %d, want the child's own pid %d", got.SID, got.PGID, got.PID)
	}
	if want, _ := filepath.EvalSymlinks(dir); got.CWD != want {
		t.Errorf("cwd %q, want %q", got.CWD, want)
	}
}

func TestEscapeeIsFoundAndKilled(t *testing.T) {
	h := newHost(t)
	c := newCollector()
	p := start(t, h, pySpec(t, c, "escape.py"))
	escID := waitEscapee(t, c, p, "escapee")
	esc := escID.PID
	rootID := identify(t, p.PID())
	marker := p.marker
	// Once the intermediate process has exited: the root and the escapee.
	waitSample(t, p, func(s Sample) bool { return lists(s, esc) && s.Processes == 2 })
	p.Kill()
	res := p.Wait()
	if alive(escID) || alive(rootID) {
		t.Fatalf("after Kill: escapee alive %v, root alive %v", alive(escID), alive(rootID))
	}
	if left := marked(t, marker); len(left) > 0 {
		t.Fatalf("processes of the tree still alive: %v", left)
	}
	if !res.Killed || res.Signal != syscall.SIGKILL || res.ExitCode != -1 {
		t.Errorf("result %+v, want killed by SIGKILL", res)
	}
}

func TestLeftoversDieWhenRootExits(t *testing.T) {
	h := newHost(t)
	c := newCollector()
	// The root exits once we know the escapee (SIGUSR1); the escapee it
	// leaves behind holds stdout open.
	p := start(t, h, pySpec(t, c, "escape.py", "exit"))
	escID := waitEscapee(t, c, p, "escapee")
	root := hostPID(t, p, c.waitPID(t, "root"))
	if err := syscall.Kill(root, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	res := waitDone(t, p, 10*time.Second)
	if alive(escID) {
		t.Fatal("the escapee outlived its tree")
	}
	if res.ExitCode != 0 || res.Killed || res.Violation != nil {
		t.Errorf("result %+v, want a clean exit", res)
	}
	if c.waitFor(t, "root ").Stream != Stdout {
		t.Error("root line not on stdout")
	}
}

// TestExitedOrphanIsReaped: an adopted orphan that exits on its own must
// not stay a zombie of stratbench.
func TestExitedOrphanIsReaped(t *testing.T) {
	h := newHost(t)
	c := newCollector()
	p := start(t, h, pySpec(t, c, "orphan_exits.py"))
	esc := waitEscapee(t, c, p, "escapee").PID
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		st, err := procfs.NewReader().Stat(esc)
		if procfs.Gone(err) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("orphan %d still there (state %c, parent %d)", esc, st.State, st.PPID)
		}
	}
	waitSample(t, p, func(s Sample) bool { return s.Processes == 1 })
}

func TestForkLoopConvergesDuringKill(t *testing.T) {
	h := newHost(t)
	c := newCollector()
	p := start(t, h, pySpec(t, c, "bomb.py"))
	marker := p.marker
	c.waitFor(t, "bombing")
	s := waitSample(t, p, func(s Sample) bool { return s.Processes >= 20 })
	begin := time.Now()
	p.Kill()
	took := time.Since(begin)
	if left := marked(t, marker); len(left) > 0 {
		t.Fatalf("%d processes of the fork loop survived the kill: %v", len(left), left)
	}
	for _, proc := range s.Procs {
		if _, err := procfs.NewReader().Stat(proc.PID); err == nil {
			if v, ok, _ := procfs.NewReader().Getenv(proc.PID, EnvMarker); ok && v == marker {
				t.Errorf("pid %d of the tree still exists", proc.PID)
			}
		}
	}
	t.Logf("fork loop: %d processes in the last sample, kill took %v", s.Processes, took)
}

func TestProcessLimit(t *testing.T) {
	h := newHost(t)
	for _, tc := range []struct {
		procs     int
		violation bool
	}{{33, true}, {32, false}} {
		c := newCollector()
		spec := pySpec(t, c, "procs.py", strconv.Itoa(tc.procs))
		spec.Limits.Processes = 32
		p := start(t, h, spec)
		marker := p.marker
		if !tc.violation {
			c.waitFor(t, "ready")
			waitSample(t, p, func(s Sample) bool { return s.Processes == tc.procs })
			p.Kill()
		}
		res := waitDone(t, p, 30*time.Second)
		if left := marked(t, marker); len(left) > 0 {
			t.Errorf("%d processes: still alive after the tree ended: %v", tc.procs, left)
		}
		v := res.Violation
		if !tc.violation {
			if v != nil || res.PeakProcesses != tc.procs {
				t.Errorf("%d processes under a 32 limit: violation %+v, peak %d", tc.procs, v, res.PeakProcesses)
			}
			continue
		}
		if v == nil || v.Kind != ViolationProcesses || v.Limit != 32 || v.Value <= 32 {
			t.Fatalf("%d processes: violation %+v, want processes over 32", tc.procs, v)
		}
		if want := " processes, over the 32-process limit"; !strings.Contains(v.Message, want) {
			t.Errorf("message %q", v.Message)
		}
	}
}

func TestMemoryLimitInGrandchild(t *testing.T) {
	h := newHost(t)
	c := newCollector()
	spec := pySpec(t, c, "memory.py", "300")
	spec.Limits.MemoryBytes = 200 << 20
	p := start(t, h, spec)
	marker := p.marker
	res := waitDone(t, p, 30*time.Second)
	v := res.Violation
	if v == nil || v.Kind != ViolationMemory || v.Value <= 200<<20 {
		t.Fatalf("violation %+v, want memory over 200 MiB", v)
	}
	if want := fmt.Sprintf("process tree used %s bytes of resident memory, %s over the 200.00 MiB limit (209,715,200 bytes)",
		units.Count(v.Value), units.Bytes(v.Value-200<<20)); v.Message != want {
		t.Errorf("message %q", v.Message)
	}
	if left := marked(t, marker); len(left) > 0 {
		t.Fatalf("still alive: %v", left)
	}
	if res.PeakMemoryBytes < v.Value || res.PeakProcesses != 3 {
		t.Errorf("peaks %d bytes %d processes, want ≥ %d bytes and 3 processes", res.PeakMemoryBytes, res.PeakProcesses, v.Value)
	}
}

// TestSpikeBetweenSamples allocates and frees memory between two samples:
// only the peak (VmHWM) shows it.
func TestSpikeBetweenSamples(t *testing.T) {
	h := newHost(t)
	c := newCollector()
	spec := pySpec(t, c, "spike.py", "250")
	spec.Limits.MemoryBytes = 150 << 20
	spec.SampleInterval = 3 * time.Second
	p := start(t, h, spec)
	freed := c.waitFor(t, "freed")
	res := waitDone(t, p, 30*time.Second)
	v := res.Violation
	if v == nil || v.Kind != ViolationMemory {
		t.Fatalf("violation %+v, want memory", v)
	}
	if !v.Time.After(freed.Time) {
		t.Fatalf("the violation (%v) came before the spike was freed (%v): the test did not test peaks", v.Time, freed.Time)
	}
}

// TestRealLimitFastAllocation maps 3 GiB at once under the real 2 GiB limit.
func TestRealLimitFastAllocation(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 2+ GiB")
	}
	h := newHost(t)
	c := newCollector()
	spec := pySpec(t, c, "mmap_alloc.py", "3")
	spec.Limits.MemoryBytes = 2 << 30
	p := start(t, h, spec)
	res := waitDone(t, p, 60*time.Second)
	if res.Violation == nil || res.Violation.Kind != ViolationMemory {
		t.Fatalf("violation %+v, want memory (lines %v)", res.Violation, c.snapshot())
	}
	if res.PeakMemoryBytes >= 11<<28 { // 2.75 GiB
		t.Fatalf("peak %s, want under 2.75 GiB", units.Bytes(res.PeakMemoryBytes))
	}
	t.Logf("violation at %s, peak seen %s, root's ru_maxrss %s, kill took %v", units.Bytes(res.Violation.Value),
		units.Bytes(res.PeakMemoryBytes), units.Bytes(p.rootRusage.Maxrss<<10), p.killTook)
}

func TestSigtermIgnoringTreeIsKilled(t *testing.T) {
	h := newHost(t)
	c := newCollector()
	p := start(t, h, pySpec(t, c, "sigterm.py"))
	c.waitFor(t, "ready")
	s := waitSample(t, p, func(s Sample) bool { return s.Processes == 2 })
	var ids []ProcID
	for _, proc := range s.Procs {
		ids = append(ids, identify(t, proc.PID))
	}
	p.Kill()
	res := p.Wait()
	for _, id := range ids {
		if alive(id) {
			t.Errorf("%d survived", id.PID)
		}
	}
	if res.Signal != syscall.SIGKILL {
		t.Errorf("root ended by %v, want SIGKILL", res.Signal)
	}
}

func TestTwoTreesUnderOneHost(t *testing.T) {
	h := newHost(t)
	ca, cb := newCollector(), newCollector()
	a := start(t, h, pySpec(t, ca, "escape.py"))
	b := start(t, h, pySpec(t, cb, "escape.py"))
	idA, idB := waitEscapee(t, ca, a, "escapee"), waitEscapee(t, cb, b, "escapee")
	escA, escB := idA.PID, idB.PID
	rootB := identify(t, b.PID())
	waitSample(t, a, func(s Sample) bool { return lists(s, escA) && !lists(s, escB) })
	waitSample(t, b, func(s Sample) bool { return lists(s, escB) && !lists(s, escA) })
	a.Kill()
	if alive(idA) {
		t.Fatal("escapee of the killed tree survived")
	}
	if !alive(idB) || !alive(rootB) {
		t.Fatal("killing one tree killed processes of the other")
	}
	waitSample(t, b, func(s Sample) bool { return lists(s, escB) && s.Processes == 2 })
	b.Kill()
	if alive(idB) || alive(rootB) {
		t.Fatal("second tree survived its kill")
	}
}

func TestKillIsIdempotent(t *testing.T) {
	h := newHost(t)
	p := start(t, h, Spec{Path: "/bin/sh", Args: []string{"-c", "exit 3"}})
	res := waitDone(t, p, 10*time.Second)
	p.Kill()
	p.Kill()
	if res.ExitCode != 3 || res.Killed || p.Wait() != res {
		t.Fatalf("result %+v after Kill following Done", p.Wait())
	}
	if _, open := <-p.Samples(); open {
		// drain whatever was left, then the channel must be closed
		for range p.Samples() {
		}
	}
}

func TestStartErrors(t *testing.T) {
	h := newHost(t)
	for name, spec := range map[string]Spec{
		"relative path": {Path: "sh"},
		"missing":       {Path: "/nonexistent/stratbench-test"},
		"negative":      {Path: "/bin/true", Limits: Limits{MemoryBytes: -1}},
		"nil file":      {Path: "/bin/true", ExtraFiles: []*os.File{nil}},
		"bad dir":       {Path: "/bin/true", Dir: "/nonexistent/dir"},
	} {
		if p, err := h.Start(context.Background(), spec); err == nil {
			p.Kill()
			t.Errorf("%s: Start succeeded", name)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Start(ctx, Spec{Path: "/bin/true"}); err == nil {
		t.Error("Start with a canceled context succeeded")
	}
}

// A root's clone(CLONE_PARENT) sibling is a child of the thread that started
// the root: it is counted from the first samples, not only by the full scan.
func TestCloneParentSiblingIsSampled(t *testing.T) {
	h := newHost(t)
	var mu sync.Mutex
	sibling := 0
	p, err := h.Start(context.Background(), Spec{Path: python(t), Args: []string{"testdata/clone_parent.py"}, Env: []string{},
		SampleInterval: 5 * time.Millisecond,
		Output: func(l Line) {
			if s, ok := strings.CutPrefix(l.Text, "sibling "); ok {
				mu.Lock()
				sibling, _ = strconv.Atoi(s)
				mu.Unlock()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	// Samples until the sibling shows, within a window shorter than the
	// once-a-second full scan.
	var seen time.Time
	for s := range p.Samples() {
		mu.Lock()
		nsPID := sibling
		mu.Unlock()
		if nsPID == 0 {
			continue
		}
		pid, err := hostPIDOf(p, nsPID)
		if err != nil {
			t.Fatal(err)
		}
		if seen.IsZero() {
			seen = time.Now()
		}
		if lists(s, pid) {
			return
		}
		if time.Since(seen) > 500*time.Millisecond {
			t.Fatalf("sibling %d not counted %s after it started", pid, time.Since(seen))
		}
	}
	t.Fatal("tree ended before the sibling was counted")
}

// A process stratbench starts outside the Host (an editor that forks and
// calls setsid) is reparented to stratbench like an orphan of a tree whose
// init was killed, but carries stratbench's own marker: no tree adopts it,
// counts it or kills it.
func TestDetachedHelperIsNotAdopted(t *testing.T) {
	forEachTracking(t, func(t *testing.T, want TreeTracking) {
		h := newHost(t)
		out, err := exec.Command("sh", "-c", "setsid sleep 300 >/dev/null 2>&1 </dev/null & echo $!").Output()
		if err != nil {
			t.Fatal(err)
		}
		helper, _ := strconv.Atoi(strings.TrimSpace(string(out)))
		defer unix.Kill(helper, unix.SIGKILL)
		p := startIn(t, h, Spec{Path: "/bin/sleep", Args: []string{"1"}, Env: []string{}, SampleInterval: 5 * time.Millisecond}, want)
		for s := range p.Samples() {
			if lists(s, helper) {
				t.Fatalf("the tree adopted stratbench's own detached helper %d", helper)
			}
		}
		p.Wait()
		if unix.Kill(helper, 0) != nil {
			t.Fatalf("the tree killed stratbench's own detached helper %d", helper)
		}
	})
}
