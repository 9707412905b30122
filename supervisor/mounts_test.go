package supervisor

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// sysvKeys returns the keys of the System V shared memory segments the host
// sees (its IPC namespace).
func sysvKeys(t *testing.T) map[int]int {
	t.Helper()
	f, err := os.Open("/proc/sysvipc/shm")
	if err != nil {
		t.Skipf("no /proc/sysvipc/shm: %v", err)
	}
	defer f.Close()
	keys := map[int]int{}
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		key, err1 := strconv.Atoi(fields[0])
		id, err2 := strconv.Atoi(fields[1])
		if err1 == nil && err2 == nil {
			keys[key] = id
		}
	}
	return keys
}

// TestSharedMemoryEndsWithTheTree: a System V segment and a /dev/shm file
// the tree leaves end with it in a PID namespace (its own IPC namespace and
// /dev/shm), the /dev/shm file counted as its memory meanwhile and never on
// the host. In the fallback both outlive it, as documented.
func TestSharedMemoryEndsWithTheTree(t *testing.T) {
	forEachTracking(t, func(t *testing.T, want TreeTracking) {
		h := newHost(t)
		key := int(time.Now().UnixNano()&0x3fffffff) | 1
		name := fmt.Sprintf("stratbench-test-%d", key)
		hostFile := filepath.Join(devShm, name)
		t.Cleanup(func() {
			os.Remove(hostFile)
			if id, ok := sysvKeys(t)[key]; ok {
				unix.SysvShmCtl(id, unix.IPC_RMID, nil)
			}
		})
		c := newCollector()
		spec := pySpec(t, c, "shm_leave.py", strconv.Itoa(key), name, "8", "hold")
		spec.DevShmBytes = 16 << 20
		p := startIn(t, h, spec, want)
		c.waitFor(t, "made")
		_, onHost := sysvKeys(t)[key]
		_, err := os.Stat(hostFile)
		switch want {
		case TrackingPIDNamespace:
			if onHost || err == nil {
				t.Errorf("while the tree runs, the host sees its segment (%v) or its /dev/shm file (%v)", onHost, err)
			}
			s := waitSample(t, p, func(s Sample) bool { return s.TmpBytes >= 8<<20 })
			if s.MemoryBytes < s.TmpBytes {
				t.Errorf("sample: /dev/shm %d bytes, memory %d; want /dev/shm counted", s.TmpBytes, s.MemoryBytes)
			}
		case TrackingFallback:
			if !onHost || err != nil {
				t.Fatalf("fallback: the host sees no segment (%v) or no file (%v): the script did not run", onHost, err)
			}
		}
		p.Kill()
		res := p.Wait()
		_, onHost = sysvKeys(t)[key]
		_, err = os.Stat(hostFile)
		if want == TrackingPIDNamespace {
			if onHost || err == nil || !res.PrivateDevShm {
				t.Errorf("after the tree: segment left %v, /dev/shm file %v, private /dev/shm %v; want neither left, and a private one",
					onHost, err, res.PrivateDevShm)
			}
			return
		}
		if !onHost || err != nil || res.PrivateDevShm {
			t.Errorf("fallback: segment left %v, file %v, private /dev/shm %v; want both left (documented), no private one", onHost, err, res.PrivateDevShm)
		}
	})
}

// TestPrivateDevShmFull: writing past the private /dev/shm's size fails
// with ENOSPC inside the tree.
func TestPrivateDevShmFull(t *testing.T) {
	t.Setenv(TrackingEnv, "auto")
	h := newHost(t)
	c := newCollector()
	spec := pySpec(t, c, "shm_leave.py", "0", fmt.Sprintf("stratbench-full-%d", time.Now().UnixNano()), "20")
	spec.Args = []string{"-c", `import errno, sys
try:
    with open("/dev/shm/x", "wb") as f:
        f.write(b"x" * (20 << 20))
    print("wrote")
except OSError as e:
    print(errno.errorcode[e.errno])`}
	spec.DevShmBytes = 4 << 20
	p := startIn(t, h, spec, TrackingPIDNamespace)
	if l := c.waitForAny(t, "ENOSPC", "wrote"); l.Text != "ENOSPC" {
		t.Errorf("20 MiB into a 4 MiB /dev/shm: %q, want ENOSPC", l.Text)
	}
	waitDone(t, p, 30*time.Second)
}

// TestCappedDirs: a capped folder is a tmpfs of its own in the tree, empty
// at start, full at its size, counted as memory; once the tree is gone
// its files and folders are on the host, holes and hard links kept, links
// and FIFOs left out with a System line, and the host's disk holds no more
// than the cap.
func TestCappedDirs(t *testing.T) {
	t.Setenv(TrackingEnv, "auto")
	h := newHost(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "host-only"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	const capBytes = 16 << 20
	c := newCollector()
	spec := pySpec(t, c, "capped_fill.py", dir)
	spec.PrivateTmpBytes = 1 << 20
	spec.CappedDirs = []CappedDir{{Path: dir, Bytes: capBytes}}
	if strings.HasPrefix(spec.Args[0], "/tmp/") {
		spec = pySpecInline(t, c, "capped_fill.py", dir) // the unprivileged run's testdata is under /tmp
		spec.PrivateTmpBytes = 1 << 20
		spec.CappedDirs = []CappedDir{{Path: dir, Bytes: capBytes}}
	}
	if strings.HasPrefix(dir, "/tmp/") {
		spec.TmpMounts = []TmpMount{{Path: dir, Writable: true}}
	}
	p := startIn(t, h, spec, TrackingPIDNamespace)
	if l := c.waitFor(t, "seen at start:"); l.Text != "seen at start: []" {
		t.Errorf("the tree saw %q; want its capped folder empty", l.Text)
	}
	res := waitDone(t, p, 30*time.Second)
	l := c.waitFor(t, "enospc ")
	var mib int
	fmt.Sscanf(l.Text, "enospc %d", &mib)
	if res.ExitCode != 0 || mib < 8 || mib > 16 {
		t.Errorf("exit %d, %q; want ENOSPC near the 16 MiB cap", res.ExitCode, l.Text)
	}
	if res.PeakMemoryBytes < capBytes*3/4 {
		t.Errorf("peak memory %d, want the capped folder's bytes counted", res.PeakMemoryBytes)
	}
	var a, sparse, link unix.Stat_t
	for path, st := range map[string]*unix.Stat_t{"a.bin": &a, "sparse.bin": &sparse, "a.49": &link} {
		if err := unix.Lstat(filepath.Join(dir, path), st); err != nil {
			t.Fatalf("%s was not copied out: %v", path, err)
		}
	}
	if a.Size != 1<<20 || a.Ino != link.Ino || a.Nlink != 51 {
		t.Errorf("a.bin: %d bytes, inode %d (a.49: %d), %d links; want 1 MiB with its 50 other names as links", a.Size, a.Ino, link.Ino, a.Nlink)
	}
	if sparse.Size != 100<<20+4096 || sparse.Blocks*512 > 64<<10 {
		t.Errorf("sparse.bin: %d bytes in %d blocks; want 100 MiB of holes and 4 KiB", sparse.Size, sparse.Blocks)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "x", "y", "z.txt")); string(b) != "deep\n" {
		t.Errorf("x/y/z.txt: %q, %v", b, err)
	}
	for _, gone := range []string{"link", "fifo"} {
		if _, err := os.Lstat(filepath.Join(dir, gone)); err == nil {
			t.Errorf("%s was copied out; want only files and folders", gone)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "host-only")); err != nil {
		t.Errorf("the host's own file: %v", err)
	}
	var disk int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			if st := fi.Sys().(*syscall.Stat_t); st.Nlink == 1 || st.Ino != a.Ino || fi.Name() == "a.bin" {
				disk += st.Blocks * 512
			}
		}
		return nil
	})
	if disk > capBytes+1<<20 {
		t.Errorf("the copy takes %d bytes of the host's disk, over the %d cap", disk, capBytes)
	}
	found := false
	for _, line := range c.snapshot() {
		if line.Stream == System && strings.Contains(line.Text, "2 entries the run left in "+dir+" were not copied there") {
			found = true
		}
	}
	if !found {
		t.Errorf("no System line about the link and the FIFO: %v", c.snapshot())
	}
}

// TestWarmRunKernelLimits: a run forked from a template has, as a cold
// start, its own IPC namespace and /dev/shm (what it leaves there ends with
// it: the next run of the same template sees none of it, nor does the
// host), counted as its memory, and its own task ceiling.
func TestWarmRunKernelLimits(t *testing.T) {
	h := newHost(t)
	strategy := script(t, "warm/kernel/strategy.py")
	key := int(time.Now().UnixNano()&0x3fffffff) | 1
	spec := templateSpec(t, python(t), strategy, newCollector(), warmEnv(t))
	spec.DevShmBytes = 16 << 20
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tp, err := h.StartTemplate(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tp.Close)
	t.Cleanup(func() {
		os.Remove(filepath.Join(devShm, fmt.Sprintf("warm-%d", key)))
		if id, ok := sysvKeys(t)[key]; ok {
			unix.SysvShmCtl(id, unix.IPC_RMID, nil)
		}
	})
	fork := func(mode string, limits Limits) *worker {
		w := newWorker(t)
		rs := w.runSpec(strategy, warmEnv(t, "WARM_MODE="+mode, "WARM_KEY="+strconv.Itoa(key)), limits)
		rs.DevShmBytes = 8 << 20
		p, err := tp.Fork(context.Background(), rs)
		w.started()
		if err != nil {
			t.Fatal(err)
		}
		w.p = p
		return w
	}
	limits := Limits{MemoryBytes: 1 << 30, Processes: 4, Tasks: 100}

	shm := fork("shm", limits)
	shm.c.waitFor(t, "made")
	if _, ok := sysvKeys(t)[key]; ok {
		t.Error("the host sees the run's segment")
	}
	if _, err := os.Stat(filepath.Join(devShm, fmt.Sprintf("warm-%d", key))); err == nil {
		t.Error("the host sees the run's /dev/shm file")
	}
	waitSample(t, shm.p, func(s Sample) bool { return s.TmpBytes >= 4<<20 })
	shm.p.Kill()
	res := shm.p.Wait()
	if !res.PrivateDevShm {
		t.Error("the run had no private /dev/shm of its own")
	}
	if h.pidMaxNS && res.TaskCeiling != taskCeiling(pidMaxFor(100)) {
		t.Errorf("the run's task ceiling %d, want %d", res.TaskCeiling, taskCeiling(pidMaxFor(100)))
	}

	look := fork("look", limits)
	look.c.waitFor(t, "file ")
	for _, l := range look.c.snapshot() {
		if strings.HasSuffix(l.Text, " seen") {
			t.Errorf("the next run of the template: %q", l.Text)
		}
	}

	threads := fork("threads", limits)
	res = waitDone(t, threads.p, 30*time.Second)
	if v := res.Violation; v == nil || v.Kind != ViolationProcesses || !strings.Contains(v.Message, "tasks (threads included)") {
		t.Errorf("the run of 151 tasks ended with %+v, want a processes violation over its 100 tasks", v)
	}
	select {
	case <-tp.Process().Done():
		t.Fatalf("the template ended with its runs: %+v", tp.Process().Wait())
	default:
	}
}
