package supervisor

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// slowRunInitEnv, in a run's environment, makes the test binary start as
// that run's init the way a larger executable does (TestMain reads it): its
// value is how long the start takes, and on the way the Go runtime opens
// descriptors of its own before the run init runs, as stratbench's package
// init functions make it do (google.golang.org/protobuf hashes the
// executable at init, which starts the runtime's network poller: an epoll
// instance and an eventfd).
//
// The start is busy, as a real one is: the runtime's monitor thread stays
// awake and polls the network poller every 10 ms or so, which, when the
// poller's descriptors were closed under the runtime, kills the process.
const slowRunInitEnv = "STRATBENCH_TEST_SLOW_RUN_INIT"

// startLikeALargerExecutable is the start slowRunInitEnv asks for: as an
// init function of protobuf does, it opens and hashes the running
// executable, again until the start's duration has passed (busy, as such a
// start is: no timer), and it keeps the executable open, as a package that
// keeps a file for the process's life does (the test looks for it).
func startLikeALargerExecutable(duration string) {
	d, err := time.ParseDuration(duration)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s=%q: %v\n", slowRunInitEnv, duration, err)
		os.Exit(2)
	}
	begin := time.Now()
	for time.Since(begin) < d {
		f, err := os.Open("/proc/self/exe")
		if err != nil {
			fmt.Fprintf(os.Stderr, "open the executable: %v\n", err)
			os.Exit(2)
		}
		io.Copy(sha256.New(), f)
		f.Close()
	}
	// Never closed: the process's own, as the runtime's are.
	if _, err := unix.Open("/proc/self/exe", unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
		fmt.Fprintf(os.Stderr, "open the executable: %v\n", err)
		os.Exit(2)
	}
}

// TestSlowRunInit: a run whose init takes long to start, and whose Go
// runtime holds descriptors of its own by the time the run init runs (its
// network poller, as in stratbench, which links more package init
// functions than this test binary), is a run like any other: Fork waits
// for its report and takes it for what it is, and the run init keeps its
// runtime's descriptors (closed under it, they crashed it: "netpoll
// failed"), works and reports the program's end. Of the descriptors the
// template left it, it keeps only stdio and its control socket.
func TestSlowRunInit(t *testing.T) {
	h := newHost(t)
	strategy := script(t, "warm/fresh/strategy.py")
	tp := startTemplate(t, h, python(t), strategy, newCollector(), warmEnv(t))
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	for run := range 2 {
		w := forkWorker(t, tp, strategy, warmEnv(t, slowRunInitEnv+"=300ms"), Limits{})
		w.manifest(t)
		w.firstHook(t)
		fds, ok := runInitFDs(t, w.p.initPID)
		if !ok {
			t.Logf("run %d: the run init's descriptors cannot be read as uid %d: only the run is checked", run, os.Geteuid())
		}
		kept := !ok
		for fd, f := range fds {
			switch {
			case fd <= 2 && f.target != "/dev/null":
				t.Errorf("run %d: the run init's fd %d is %s, want /dev/null", run, fd, f.target)
			case fd > runInitFD && !f.cloexec:
				// Everything the runtime opens is close-on-exec;
				// a descriptor that is not came from the template.
				t.Errorf("run %d: the run init holds fd %d (%s), inherited from the template", run, fd, f.target)
			}
			kept = kept || f.target == exe && f.cloexec
		}
		if !kept {
			t.Fatalf("run %d: the run init does not hold the executable its slow start opened: %+v", run, fds)
		}
		if res := w.quit(t); res.ExitCode != 0 || res.InitLost || res.TemplateLost || res.Violation != nil {
			t.Fatalf("run %d ended with %+v; output %v", run, res, w.c.snapshot())
		}
	}
	checkTemplateAlive(t, tp, "after slow run inits")
}

// TestRunInitClosesWhatTheTemplateLeft: of the descriptors a template
// leaves open across the exec of a run's init (warm/leaky.py leaves every
// one it has), the run init keeps stdio, which it points at /dev/null, and
// its control socket only, and the run goes on until it is killed.
func TestRunInitClosesWhatTheTemplateLeft(t *testing.T) {
	h := newHost(t)
	c := newCollector()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tp, err := h.StartTemplate(ctx, Spec{Path: python(t), Args: []string{script(t, "warm/leaky.py")},
		Env: []string{"PYTHONDONTWRITEBYTECODE=1"}, Output: c.output, Limits: templateLimits})
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Close()
	w := newWorker(t)
	p, err := tp.Fork(ctx, w.runSpec(script(t, "warm/fresh/strategy.py"), nil, Limits{}))
	w.started()
	if err != nil {
		t.Fatal(err)
	}
	w.p = p
	if left := c.waitFor(t, "leaving ").Text; left == "leaving " {
		t.Fatalf("the template left the run init no descriptor: %q", left)
	}
	w.c.waitFor(t, "program running")
	fds, ok := runInitFDs(t, p.initPID)
	if !ok {
		t.Skipf("the run init's descriptors cannot be read as uid %d", os.Geteuid())
	}
	p.Kill()
	if res := waitDone(t, p, 30*time.Second); !res.Killed || res.InitLost || res.TemplateLost {
		t.Errorf("the run ended with %+v, want killed by Kill", res)
	}
	for fd, f := range fds {
		switch {
		case fd <= 2 && f.target != "/dev/null":
			t.Errorf("the run init's fd %d is %s, want /dev/null", fd, f.target)
		case fd > runInitFD && !f.cloexec:
			t.Errorf("the run init holds fd %d (%s), which the template left it", fd, f.target)
		}
	}
}

// runInitFile is one descriptor of a process, as its /proc shows it.
type runInitFile struct {
	target  string
	cloexec bool
}

// runInitFDs returns the descriptors of the run init pid, and false when
// they cannot be read: without root, a run init's /proc/PID/fd is root's
// (it is not dumpable, and its user namespace maps no root), which lets
// nobody else list it.
func runInitFDs(t *testing.T, pid int) (map[int]runInitFile, bool) {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrPermission) && os.Geteuid() != 0 {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]runInitFile{}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		target, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue // closed since the listing
		}
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%d", pid, fd))
		if err != nil {
			continue
		}
		f := runInitFile{target: target}
		for _, line := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(line, "flags:"); ok {
				flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
				if err != nil {
					t.Fatalf("%s: flags %q: %v", dir, v, err)
				}
				f.cloexec = flags&unix.O_CLOEXEC != 0
			}
		}
		out[fd] = f
	}
	return out, true
}
