// Package supervisor runs a command as a supervised process tree: its own
// session and process group, a sampled view of the whole tree (resident memory,
// process count), limits enforced by killing the whole tree, and stdout/stderr
// captured line by line under a byte cap. It knows nothing of Python or hooks.
//
// The tree is every process descended from the root, including processes
// that left its process group or session (setsid, double fork): stratbench is
// a child subreaper, so such orphans are reparented to it and the Host
// attributes them to the tree they came from. The package is Linux-only.
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/supervisor/internal/procfs"
)

// Stream says where a captured line came from.
type Stream uint8

// Streams of captured lines. System lines are the supervisor's own notices
// (the truncation notice).
const (
	Stdout Stream = iota + 1
	Stderr
	System
)

func (s Stream) String() string {
	switch s {
	case Stdout:
		return "stdout"
	case Stderr:
		return "stderr"
	case System:
		return "system"
	}
	return "unknown"
}

// Line is one captured line: valid UTF-8 (invalid bytes replaced by U+FFFD),
// without its newline (nor the carriage return of a CRLF ending). A line
// longer than Limits.LineBytes is cut and ends with CutMarker; the rest of it
// is dropped. A last line without a newline is delivered at end of output.
type Line struct {
	Time   time.Time
	Stream Stream
	Text   string
}

// CutMarker ends a line that was cut at Limits.LineBytes (or at the output
// cap).
const CutMarker = " … [line cut]"

// Limits are enforced over the whole tree. Zero disables a limit.
type Limits struct {
	// MemoryBytes bounds the resident memory summed over the live processes
	// of the tree. Each process counts with its peak since the previous
	// sample (VmHWM), so an allocation freed between two samples still
	// counts. Pages shared between processes count once per process.
	MemoryBytes int64
	// Processes bounds the live processes of the tree, the root included.
	// Threads and zombies do not count.
	Processes int
	// OutputBytes bounds the stdout+stderr bytes kept (text and newlines of
	// delivered lines); the rest is drained and discarded after one System
	// line says so.
	OutputBytes int64
	// LineBytes is the longest line kept whole; zero means 64 KiB.
	LineBytes int
}

// Spec says what to run and how.
type Spec struct {
	Path string   // executable, absolute; it is argv[0] too
	Args []string // argv[1:]
	// Env is the complete environment of the root. The Host appends one
	// variable of its own, EnvMarker, which it uses to attribute orphans to
	// their tree; nothing of stratbench's environment is passed on.
	Env []string
	Dir string // working directory; empty means stratbench's own
	// ExtraFiles become fds 3, 4, ... in the root; they are its only fds
	// besides stdin (/dev/null), stdout and stderr (two pipes). Start does
	// not close them: the caller closes its copies once Start returned.
	ExtraFiles []*os.File
	Limits     Limits
	// SampleInterval is the sampling period of the tree (default 20 ms).
	SampleInterval time.Duration
	// StateFile, when set, records the tree's processes (pid and start time)
	// and the supervising process, so that Sweep can kill them after
	// stratbench itself was killed. It is written atomically (a temporary
	// file named StateFile+".tmp*", then a rename), at most a few times a
	// second, and removed when the tree is gone.
	StateFile string
	// Output receives every captured line, in order per stream, from the
	// supervisor's own goroutines, one call at a time; stdout and stderr are
	// two pipes, so their relative order is only as good as their arrival.
	// It must return quickly (the child blocks on a full pipe while it
	// runs) and must not wait for the Process to be Done. Nil discards the
	// lines (they still count against OutputBytes).
	Output func(Line)
}

// EnvMarker is the name of the variable the Host adds to every tree's
// environment. Its value names the supervising process and the tree.
const EnvMarker = "STRATBENCH_SUPERVISOR_TREE"

// Defaults for zero fields of Spec and Limits.
const (
	DefaultSampleInterval = 20 * time.Millisecond
	DefaultLineBytes      = 64 << 10
)

// Proc is one live process of the tree.
type Proc struct {
	PID      int
	PPID     int
	RSSBytes int64  // resident memory now
	Command  string // command line, read once per process (again after an exec)
}

// Sample is one view of the tree.
type Sample struct {
	Time        time.Time
	MemoryBytes int64 // resident memory summed over the tree, peaks between samples included
	Processes   int
	Procs       []Proc // ordered by pid
}

// Violation kinds.
const (
	ViolationMemory    = "memory"
	ViolationProcesses = "processes"
)

// Violation is a limit the tree broke; the supervisor killed the tree for it.
type Violation struct {
	Kind    string
	Limit   int64
	Value   int64
	Message string // for users, e.g. "process tree used 2.31 GiB resident memory, over the 2.00 GiB limit"
	Time    time.Time
}

// Result is how a supervised tree ended.
type Result struct {
	ExitCode  int            // -1 when the root was killed by a signal
	Signal    syscall.Signal // the signal that ended the root, if any
	Violation *Violation     // set when a limit was broken
	Killed    bool           // Kill was called before the tree ended on its own
	// PeakMemoryBytes is the largest MemoryBytes of any sample, and of the
	// tree as it stood when it was stopped for a kill.
	PeakMemoryBytes int64
	PeakProcesses   int
	OutputBytes     int64 // bytes kept
	OutputTruncated bool
}

// Host holds the process-wide state of supervision: stratbench is a child
// subreaper, so orphans of a tree are reparented to it, and the Host
// attributes them to the tree they came from. Several trees may run at once.
//
// An orphan is attributed by the EnvMarker in its environment; one without
// it (it replaced its environment, or it is a zombie) goes to the only live
// tree, or, with several live trees, to the first that sees it. Orphans in
// stratbench's own session are never touched: they are children that
// stratbench started itself, outside the Host (os/exec reaps those), or
// their orphaned descendants. A helper that stratbench starts outside the
// Host must therefore not leave stratbench's session (setsid) while a tree
// runs, or it is taken for an orphan of that tree. Create one Host per
// process.
type Host struct {
	pid   int
	start uint64 // our start time: with pid it names this stratbench in state files
	sid   int

	mu     sync.Mutex
	nextID uint64
	trees  map[string]*tree // live trees by marker
	roots  map[int]bool     // roots started and not yet waited: os/exec reaps those
	// rootThreads are the threads that started live roots: a root's
	// clone(CLONE_PARENT) children are children of that thread.
	rootThreads map[int]bool
	claimed     map[int]claim // every process some live tree tracks
}

// claim says which tree tracks a process.
type claim struct {
	start uint64
	tree  *tree
}

// NewHost marks every inherited fd from 3 up close-on-exec (fds that
// stratbench inherited without it would otherwise reach every child) and
// makes the calling process a child subreaper. It also sets EnvMarker in
// stratbench's own environment to a value that names no tree, so that a
// process stratbench starts outside the Host ($EDITOR, say) and that detaches
// is never taken for an orphan of a tree. Call it once, early in main.
func NewHost() (*Host, error) {
	if err := closeOnExecFrom(3); err != nil {
		return nil, fmt.Errorf("supervisor: mark inherited fds close-on-exec: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("supervisor: become child subreaper: %w", err)
	}
	self, err := procfs.NewReader().Stat(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("supervisor: read own stat: %w", err)
	}
	if err := os.Setenv(EnvMarker, fmt.Sprintf("%d.%d.0", self.PID, self.StartTime)); err != nil {
		return nil, fmt.Errorf("supervisor: mark own environment: %w", err)
	}
	return &Host{
		pid:         self.PID,
		start:       self.StartTime,
		sid:         self.SID,
		trees:       map[string]*tree{},
		roots:       map[int]bool{},
		rootThreads: map[int]bool{},
		claimed:     map[int]claim{},
	}, nil
}

// closeOnExecFrom sets FD_CLOEXEC on every fd from first up.
func closeOnExecFrom(first int) error {
	err := unix.CloseRange(uint(first), ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EINVAL) {
		return err
	}
	// Before Linux 5.11: walk the open fds.
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd >= first {
			unix.CloseOnExec(fd)
		}
	}
	return nil
}

// Start starts spec as the root of a new tree: in its own session, with
// stdin /dev/null, stdout and stderr on two pipes the supervisor reads,
// exactly spec.ExtraFiles as fds 3 and up, exactly spec.Env (plus EnvMarker),
// and SIGKILL as its parent-death signal. The tree is sampled from then on
// and killed on a limit violation, on Kill, and after the root exits (no
// process of a finished tree survives). ctx bounds only the start.
func (h *Host) Start(ctx context.Context, spec Spec) (*Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("supervisor: start %s: %w", spec.Path, err)
	}
	if err := spec.check(); err != nil {
		return nil, fmt.Errorf("supervisor: start %s: %w", spec.Path, err)
	}
	if spec.SampleInterval == 0 {
		spec.SampleInterval = DefaultSampleInterval
	}
	if spec.Limits.LineBytes == 0 {
		spec.Limits.LineBytes = DefaultLineBytes
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("supervisor: start %s: stdout pipe: %w", spec.Path, err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("supervisor: start %s: stderr pipe: %w", spec.Path, err)
	}

	t := h.newTree(spec)
	env := make([]string, 0, len(spec.Env)+1)
	env = append(append(env, spec.Env...), EnvMarker+"="+t.marker) // never nil: a nil Env inherits ours
	cmd := &exec.Cmd{
		Path:       spec.Path,
		Args:       append([]string{spec.Path}, spec.Args...),
		Env:        env,
		Dir:        spec.Dir,
		Stdout:     outW,
		Stderr:     errW,
		ExtraFiles: spec.ExtraFiles,
		SysProcAttr: &syscall.SysProcAttr{
			Setsid:    true,
			Pdeathsig: syscall.SIGKILL,
		},
	}
	started := make(chan error, 1)
	go t.runRoot(cmd, started)
	err = <-started
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("supervisor: start %s: %w", spec.Path, err)
	}

	p := t.proc
	p.capture.start(outR, errR)
	go t.supervise()
	if err := ctx.Err(); err != nil {
		p.Kill()
		return nil, fmt.Errorf("supervisor: start %s: %w", spec.Path, err)
	}
	return p, nil
}

func (s *Spec) check() error {
	switch {
	case !filepath.IsAbs(s.Path):
		return errors.New("the executable must be an absolute path")
	case s.Limits.MemoryBytes < 0 || s.Limits.Processes < 0 || s.Limits.OutputBytes < 0 || s.Limits.LineBytes < 0:
		return fmt.Errorf("negative limit in %+v", s.Limits)
	case s.SampleInterval < 0:
		return fmt.Errorf("negative sample interval %v", s.SampleInterval)
	}
	for i, f := range s.ExtraFiles {
		if f == nil {
			return fmt.Errorf("extra file %d (fd %d) is nil", i, i+3)
		}
	}
	return nil
}

// runRoot starts and waits the root on one locked OS thread: the parent-death
// signal fires when the thread that forked the child exits (golang/go#27505),
// so that thread must live as long as the child. The goroutine never unlocks,
// so the thread ends with it, after the root was reaped.
func (t *tree) runRoot(cmd *exec.Cmd, started chan<- error) {
	runtime.LockOSThread()
	tid := unix.Gettid()
	h := t.host
	h.mu.Lock()
	err := cmd.Start()
	if err == nil {
		h.roots[cmd.Process.Pid] = true
		h.rootThreads[tid] = true
		h.trees[t.marker] = t
		// Pinned before anything can reap it: os/exec waits only below.
		err = t.addRoot(cmd.Process.Pid)
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			delete(h.roots, cmd.Process.Pid)
			delete(h.rootThreads, tid)
			delete(h.trees, t.marker)
		}
	}
	h.mu.Unlock()
	started <- err
	if err != nil {
		return
	}
	cmd.Wait()
	h.mu.Lock()
	delete(h.roots, cmd.Process.Pid)
	delete(h.rootThreads, tid)
	h.mu.Unlock()
	t.rootExit <- cmd.ProcessState
}

// Process is a running tree.
type Process struct {
	pid     int
	marker  string // the tree's EnvMarker value
	samples chan Sample
	done    chan struct{}
	gone    chan struct{} // closed when no process of the tree is left

	killOnce sync.Once
	killReq  chan struct{}

	capture *capture
	result  Result // final once done is closed
	// For measurements, final once gone (killTook) and done are closed: how
	// long the kill took, and the root's resource usage, whose ru_maxrss is
	// the root's true peak, to compare with what sampling saw.
	killTook   time.Duration
	rootRusage *syscall.Rusage
}

// PID returns the root's pid.
func (p *Process) PID() int { return p.pid }

// Samples delivers the newest sample; older unread samples are replaced. The
// channel is closed when the tree is gone.
func (p *Process) Samples() <-chan Sample { return p.samples }

// Done is closed when the tree is gone: the root exited (or was killed), every
// other process of the tree was killed and reaped, and output was drained.
func (p *Process) Done() <-chan struct{} { return p.done }

// Kill kills every process of the tree, adopted orphans included, and returns
// when none is left. It is safe to call more than once and after Done.
func (p *Process) Kill() {
	p.killOnce.Do(func() { close(p.killReq) })
	<-p.gone
}

// Wait waits for Done and returns the result.
func (p *Process) Wait() Result {
	<-p.done
	return p.result
}
