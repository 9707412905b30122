// Package supervisor runs a command as a supervised process tree: a sampled
// view of the whole tree (resident memory, process count), limits enforced by
// killing the whole tree, and stdout/stderr captured line by line under a
// byte cap. It knows nothing of Python or hooks.
//
// The root of every tree is a small init of ours (see MaybeRunInit and
// Host), with the command as its only direct child. The tree is every
// process descended from the init, including processes that left its
// process group or session (setsid, double fork) or rewrote their
// environment: where the system allows it the tree lives in a PID namespace
// of its own, whose PID 1 is the init, and otherwise the init is a child
// subreaper (TreeTracking). The package is Linux-only.
package supervisor

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
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
	// Processes bounds the live processes of the tree, the program
	// included and the tree's init not. Threads and zombies do not count.
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
	// Path is the program to run. It must be absolute; it is argv[0] too.
	Path string
	// Args holds the arguments after argv[0].
	Args []string
	// Env is the complete environment of the program. The Host appends one
	// variable of its own, EnvMarker; nothing of stratbench's environment
	// is passed on.
	Env []string
	// Dir is the program's working directory; empty means stratbench's own.
	Dir string
	// ExtraFiles become fds 3, 4, ... in the program; they are its only fds
	// besides stdin (/dev/null), stdout and stderr (two pipes). Start does
	// not close them: the caller closes its copies once Start returned.
	// The tree's init closes its own copies once the program runs, so end
	// of file on them depends on the tree alone.
	ExtraFiles []*os.File
	// Limits are enforced over the whole tree.
	Limits Limits
	// FileSizeBytes, when positive, is the largest file the program and
	// its descendants may write (RLIMIT_FSIZE, soft and hard, set before
	// the program starts and inherited at fork): a write past it fails
	// with EFBIG (Python ignores the SIGXFSZ that comes with it, and so
	// raises OSError). Zero means unlimited. Process.SetFileSizeLimit
	// lowers it later.
	FileSizeBytes int64
	// PrivateTmpBytes, when positive, mounts a tmpfs of that size on /tmp
	// for the tree alone, gone with the tree. The bytes it holds count as
	// the tree's memory in every sample (tmpfs pages are nobody's resident
	// memory). The tree no longer sees what the host has under /tmp: a
	// program, script or folder named by a path there is hidden (Dir stays
	// the working directory). It needs the PID-namespace tree tracking:
	// Start fails in the fallback.
	PrivateTmpBytes int64
	// SampleInterval is the sampling period of the tree (default 20 ms).
	SampleInterval time.Duration
	// StateFile, when set, records the tree's processes (pid and start time)
	// and the supervising process, so that Sweep can kill them after
	// stratbench itself was killed. It is written atomically (a temporary
	// file named StateFile+".tmp*", then a rename), at most a few times a
	// second, and removed when the tree is gone. Only under the fallback
	// tracking: a PID namespace dies with the init, which dies with
	// stratbench, so nothing would be left to kill.
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
	PID      int // as stratbench's /proc numbers it
	PPID     int
	RSSBytes int64  // resident memory now
	Command  string // command line, read once per process (again after an exec)
}

// Sample is one view of the tree. The tree's init is not part of it.
type Sample struct {
	Time time.Time
	// MemoryBytes is the resident memory summed over the tree, peaks
	// between samples included, plus TmpBytes.
	MemoryBytes int64
	TmpBytes    int64 // bytes held by the private /tmp (Spec.PrivateTmpBytes)
	Processes   int
	Procs       []Proc // ordered by pid
	// TreeTracking is how the tree's membership is known.
	TreeTracking TreeTracking
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

// Result is how a supervised tree ended. ExitCode and Signal describe the
// program Spec started (not the tree's init).
type Result struct {
	ExitCode  int            // -1 when the program was killed by a signal
	Signal    syscall.Signal // the signal that ended the program, if any
	Violation *Violation     // set when a limit was broken
	Killed    bool           // Kill was called before the tree ended on its own
	// InitLost says that the tree's init ended before it could report how
	// the program ended: something killed it from inside the tree (only
	// the fallback allows that) or it failed. The program was killed with
	// it (by the namespace's end, or by its parent-death signal), so
	// ExitCode is -1 and Signal SIGKILL; a System line says so too.
	InitLost bool
	// TemplateLost, for a run forked from a template (Template.Fork), says
	// that the template ended while the run was in flight: the run's
	// namespace lies within the template's and was killed with it. A
	// crash of the run, not of what it ran. InitLost is set too.
	TemplateLost bool
	// PeakMemoryBytes is the largest MemoryBytes of any sample, and of the
	// tree as it stood when it was stopped for a kill.
	PeakMemoryBytes int64
	PeakProcesses   int
	OutputBytes     int64 // bytes kept
	OutputTruncated bool
	TreeTracking    TreeTracking
}

// Host starts and supervises trees; several may run at once. Create one
// Host per process, early (see NewHost).
//
// Every tree's root is an init of ours (the running binary re-executed; see
// MaybeRunInit), with the program Spec names as its only direct child. Where
// the system allows it, the init is PID 1 of a new PID namespace (through a
// user namespace when stratbench is not root): membership of the tree is
// then a kernel fact, and killing the init kills the namespace. Elsewhere
// (see TreeTracking) the init is a child subreaper in stratbench's own
// namespace.
//
// Only in the fallback, and only after something killed a tree's init, can
// an orphan of a tree reach stratbench, which is a child subreaper too. Such
// an orphan is attributed by the EnvMarker in its environment when the value
// names a live tree. Any other value, or none (it replaced its environment,
// or it is a zombie), sends it to the only live tree, or, with several live
// trees, to the first that sees it; except stratbench's own value (see
// NewHost), which no process of a tree can know. Orphans in stratbench's own
// session are never touched: they are children that stratbench started
// itself, outside the Host (os/exec reaps those), or their orphaned
// descendants. A helper that stratbench starts outside the Host must
// therefore not leave stratbench's session (setsid) while a tree runs.
type Host struct {
	pid       int
	start     uint64 // our start time: with pid it names this stratbench in state files
	sid       int
	ownMarker string // our own EnvMarker value
	// forceFallback says that TrackingEnv forces the fallback tracking.
	forceFallback bool

	mu      sync.Mutex
	nextID  uint64
	trees   map[string]*tree // live trees by marker
	roots   map[int]bool     // inits started and not yet waited: os/exec reaps those
	claimed map[int]claim    // every process some live tree tracks
}

// claim says which tree tracks a process.
type claim struct {
	start uint64
	tree  *tree
}

// NewHost marks every inherited fd from 3 up close-on-exec (fds that
// stratbench inherited without it would otherwise reach every child) and
// makes the calling process a child subreaper. It also sets EnvMarker in
// stratbench's own environment to a value of its own that names no tree
// (random: it never appears in /proc, which shows a process's initial
// environment only), so that a process stratbench starts outside the Host
// ($EDITOR, say) and that detaches is never taken for an orphan of a tree.
// It fails when TrackingEnv has a value it does not know. Call it once,
// early in main.
func NewHost() (*Host, error) {
	forceFallback, err := trackingFromEnv()
	if err != nil {
		return nil, fmt.Errorf("supervisor: %w", err)
	}
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
	var nonce [8]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, fmt.Errorf("supervisor: %w", err)
	}
	own := fmt.Sprintf("%d.%d.0.%x", self.PID, self.StartTime, nonce)
	if err := os.Setenv(EnvMarker, own); err != nil {
		return nil, fmt.Errorf("supervisor: mark own environment: %w", err)
	}
	return &Host{
		pid:           self.PID,
		start:         self.StartTime,
		sid:           self.SID,
		ownMarker:     own,
		forceFallback: forceFallback,
		trees:         map[string]*tree{},
		roots:         map[int]bool{},
		claimed:       map[int]claim{},
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

// Start starts spec as a new tree: our init, then below it the program, in
// its own session, with stdin /dev/null, stdout and stderr on two pipes the
// supervisor reads, exactly spec.ExtraFiles as fds 3 and up, exactly
// spec.Env (plus EnvMarker), and SIGKILL as its parent-death signal. The
// tree is sampled from then on and killed on a limit violation, on Kill, and
// after the program exits (no process of a finished tree survives). ctx
// bounds only the start.
func (h *Host) Start(ctx context.Context, spec Spec) (*Process, error) {
	t, err := h.startTree(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("supervisor: start %s: %w", spec.Path, err)
	}
	go t.supervise()
	return t.proc, nil
}

// startTree starts a tree without its supervise goroutine.
func (h *Host) startTree(ctx context.Context, spec Spec) (*tree, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := spec.check(); err != nil {
		return nil, err
	}
	if spec.SampleInterval == 0 {
		spec.SampleInterval = DefaultSampleInterval
	}
	if spec.Limits.LineBytes == 0 {
		spec.Limits.LineBytes = DefaultLineBytes
	}
	if spec.PrivateTmpBytes > 0 && h.forceFallback {
		return nil, fmt.Errorf("a private /tmp needs the PID-namespace tree tracking, and %s=fallback forbids it", TrackingEnv)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	ctl, initCtl, err := controlSocket()
	if err != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		return nil, err
	}

	t := h.newTree(spec, ctl)
	env := make([]string, 0, len(spec.Env)+1)
	env = append(append(env, spec.Env...), EnvMarker+"="+t.marker)
	cfg := initConfig{
		Path:            spec.Path,
		Argv:            append([]string{spec.Path}, spec.Args...),
		Env:             env,
		Dir:             spec.Dir,
		Files:           len(spec.ExtraFiles),
		FileSizeBytes:   spec.FileSizeBytes,
		PrivateTmpBytes: spec.PrivateTmpBytes,
	}
	sent, err := t.sendConfig(cfg)
	if err == nil {
		err = t.startInit(cfg, outW, errW, initCtl)
	}
	// The init holds its own copies now.
	outW.Close()
	errW.Close()
	initCtl.Close()
	if err == nil {
		err = t.handshake(ctx, cfg, sent)
		if err != nil {
			t.abort()
		}
	}
	if err != nil {
		outR.Close()
		errR.Close()
		t.closeFDs() // ends a config write still blocked
		if sent != nil {
			<-sent
		}
		return nil, err
	}
	t.proc.capture.start(outR, errR)
	go t.readControl()
	return t, nil
}

func (s *Spec) check() error {
	switch {
	case !filepath.IsAbs(s.Path):
		return errors.New("the executable must be an absolute path")
	case s.Limits.MemoryBytes < 0 || s.Limits.Processes < 0 || s.Limits.OutputBytes < 0 || s.Limits.LineBytes < 0:
		return fmt.Errorf("negative limit in %+v", s.Limits)
	case s.SampleInterval < 0:
		return fmt.Errorf("negative sample interval %v", s.SampleInterval)
	case s.FileSizeBytes < 0:
		return fmt.Errorf("negative file size limit %d", s.FileSizeBytes)
	case s.PrivateTmpBytes < 0:
		return fmt.Errorf("negative private /tmp size %d", s.PrivateTmpBytes)
	}
	for i, f := range s.ExtraFiles {
		if f == nil {
			return fmt.Errorf("extra file %d (fd %d) is nil", i, i+3)
		}
	}
	return nil
}

// controlSocket returns the two ends of a control socket: ours, non-blocking
// so that reads can have deadlines, and the init's, blocking. Both are
// close-on-exec: the init's reaches the init through ExtraFiles only.
func controlSocket() (ours, theirs *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("control socket: %w", err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, fmt.Errorf("control socket: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "control"), os.NewFile(uintptr(fds[1]), "init control"), nil
}

// sendConfig writes cfg to the control socket on a goroutine of its own,
// while the init starts (the socket buffers it; a larger config waits for
// the init to read it). The returned channel gets the write's outcome, then
// is closed.
func (t *tree) sendConfig(cfg initConfig) (<-chan error, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("init config: %w", err)
	}
	if len(b) > maxInitConfig {
		return nil, fmt.Errorf("init config of %d bytes (the environment and arguments), at most %d", len(b), maxInitConfig)
	}
	msg := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(b)), uint32(len(b)))
	msg = append(msg, b...)
	sent := make(chan error, 1)
	go func() {
		_, err := t.ctl.Write(msg)
		sent <- err
		close(sent) // later receives return at once
	}()
	return sent, nil
}

// startInit starts the init: in namespaces of its own unless they are
// refused or the fallback is forced. An attempt that fails starts nothing,
// so the config waits in the socket for the next.
func (t *tree) startInit(cfg initConfig, stdout, stderr, ctl *os.File) error {
	var refusals []error
	if !t.host.forceFallback {
		for _, a := range nsAttempts(os.Geteuid(), os.Getegid()) {
			err := t.spawnInit(cfg, TrackingPIDNamespace, stdout, stderr, ctl, a.attr)
			if err == nil {
				return nil
			}
			if !nsRefused(err) {
				return err
			}
			refusals = append(refusals, fmt.Errorf("%s: %w", a.name, err))
		}
	}
	if cfg.PrivateTmpBytes > 0 {
		return fmt.Errorf("a private /tmp needs the PID-namespace tree tracking, which this system refused: %w", errors.Join(refusals...))
	}
	return t.spawnInit(cfg, TrackingFallback, stdout, stderr, ctl, nil)
}

// spawnInit starts the init with namespaces set by ns (nil: none).
func (t *tree) spawnInit(cfg initConfig, tracking TreeTracking, stdout, stderr, ctl *os.File, ns func(*syscall.SysProcAttr)) error {
	attr := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if ns != nil {
		ns(attr)
	}
	cmd := &exec.Cmd{
		// The running binary, even if its file was replaced since.
		Path: "/proc/self/exe",
		Args: initArgs(3+cfg.Files, tracking),
		// The Go runtime reads a few variables (GODEBUG, GOGC) before
		// the init runs: it gets the program's environment, not ours.
		Env:         cfg.Env,
		Stdout:      stdout,
		Stderr:      stderr,
		ExtraFiles:  append(slices.Clip(t.spec.ExtraFiles), ctl),
		SysProcAttr: attr,
	}
	started := make(chan error, 1)
	go t.runRoot(cmd, started)
	if err := <-started; err != nil {
		return err
	}
	t.tracking = tracking
	t.proc.tracking = tracking
	if tracking == TrackingPIDNamespace {
		// The namespace dies with the init, and the init with
		// stratbench: nothing can be left for Sweep, so no state file
		// is written (nor a disk write a few times a second).
		t.state = nil
	}
	return nil
}

// runRoot starts and waits the init on one locked OS thread: the parent-death
// signal fires when the thread that forked the child exits (golang/go#27505),
// so that thread must live as long as the child. The goroutine never unlocks,
// so the thread ends with it, after the init was reaped.
func (t *tree) runRoot(cmd *exec.Cmd, started chan<- error) {
	runtime.LockOSThread()
	h := t.host
	h.mu.Lock()
	err := cmd.Start()
	if err == nil {
		h.roots[cmd.Process.Pid] = true
		h.trees[t.marker] = t
		// Pinned before anything can reap it: os/exec waits only below.
		err = t.addRoot(cmd.Process.Pid)
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			delete(h.roots, cmd.Process.Pid)
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
	h.mu.Unlock()
	t.rootExit <- cmd.ProcessState
}

// handshake waits until the init has its config and started the program,
// pins the program and lets the init go on.
func (t *tree) handshake(ctx context.Context, cfg initConfig, sent <-chan error) error {
	stop := context.AfterFunc(ctx, func() { t.ctl.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	m, err := t.readMessage()
	if werr := <-sent; werr != nil && err == nil {
		err = fmt.Errorf("send the init its config: %w", werr)
	}
	switch {
	case err != nil:
		return fmt.Errorf("the init did not start the program: %w", t.ctxErr(ctx, err))
	case m.Error != "":
		return errors.New(m.Error)
	case m.Started <= 0:
		return fmt.Errorf("the init said %+v, want the program's pid", m)
	}
	if t.proc.pid, err = t.childPID(m.Started); err != nil {
		return err
	}
	t.proc.procMounted = m.ProcMounted
	if cfg.PrivateTmpBytes > 0 {
		// Through the init's root: its mount namespace, where the
		// tmpfs is. Reading /proc/PID/root needs ptrace access to the
		// non-dumpable init: stratbench has it as root, or as the
		// owner of the init's user namespace. Before the ack: until
		// then the init waits, alive, even if the program has already
		// exited (after it, a quick program's end would end the init
		// and its namespace, and the open would fail).
		fd, err := unix.Open(fmt.Sprintf("/proc/%d/root/tmp", t.rootPID), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open the private /tmp: %w", err)
		}
		t.tmp = fd
	}
	if _, err := t.ctl.Write([]byte{'\n'}); err != nil {
		return fmt.Errorf("let the init go on: %w", t.ctxErr(ctx, err))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return t.ctl.SetDeadline(time.Time{})
}

// ctxErr returns ctx's error when it caused err (a deadline in the past).
func (t *tree) ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// readMessage reads one message of the init.
func (t *tree) readMessage() (initMessage, error) {
	var m initMessage
	line, err := t.ctlR.ReadSlice('\n')
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return m, fmt.Errorf("init message %.80q: %w", line, err)
	}
	return m, nil
}

// readControl reads the init's messages until it is gone, passes the
// program's exit status on and closes ctlDone.
func (t *tree) readControl() {
	defer close(t.ctlDone)
	for {
		m, err := t.readMessage()
		if err != nil {
			return // end of file: the init is gone (or, if it is not, broken: the tree ends either way)
		}
		if m.Exit != nil {
			select {
			case t.childExit <- unix.WaitStatus(*m.Exit):
			default: // one exit per tree
			}
		}
	}
}

// childPID returns the pid, as stratbench sees it, of the init's child that
// the init numbers nsPID: the last entry of its NSpid, which is its pid in
// its own namespace, the init's.
func (t *tree) childPID(nsPID int) (int, error) {
	root := t.members[t.rootPID]
	st, err := root.proc.Status(t.r)
	if err != nil {
		return 0, fmt.Errorf("read the init's status: %w", err)
	}
	kids, err := root.proc.Children(t.r, st.Threads, nil)
	if err != nil {
		return 0, fmt.Errorf("list the init's children: %w", err)
	}
	var ns []int
	for _, kid := range kids {
		if ns, err = t.r.NSPIDs(kid, ns[:0]); err == nil && ns[len(ns)-1] == nsPID {
			return kid, nil
		}
	}
	return 0, fmt.Errorf("the init's child %d is not among its children %v", nsPID, kids)
}

// Process is a running tree.
type Process struct {
	pid     int // the program's
	initPID int // the tree's init
	// procMounted says that the program's /proc is its namespace's.
	procMounted bool
	marker      string // the tree's EnvMarker value
	tracking    TreeTracking
	samples     chan Sample
	done        chan struct{}
	gone        chan struct{} // closed when no process of the tree is left

	killOnce sync.Once
	killReq  chan struct{}
	fsizeReq chan fsizeRequest

	capture *capture
	result  Result // final once done is closed
	// For measurements, final once gone (killTook) and done are closed: how
	// long the kill took, and the init's resource usage, whose ru_maxrss is
	// the largest of the init's and the program's peaks (the init reaps
	// the program), to compare with what sampling saw.
	killTook   time.Duration
	rootRusage *syscall.Rusage
}

// fsizeRequest asks the supervise goroutine to apply a file size limit.
type fsizeRequest struct {
	bytes int64
	done  chan error
}

// PID returns the pid of the program Spec named (not of the tree's init), as
// stratbench's /proc numbers it.
func (p *Process) PID() int { return p.pid }

// TreeTracking says how the tree's membership is known.
func (p *Process) TreeTracking() TreeTracking { return p.tracking }

// Samples delivers the newest sample; older unread samples are replaced. The
// channel is closed when the tree is gone.
func (p *Process) Samples() <-chan Sample { return p.samples }

// Done is closed when the tree is gone: the program exited (or was killed),
// every other process of the tree was killed and reaped, and output was
// drained.
func (p *Process) Done() <-chan struct{} { return p.done }

// Kill kills every process of the tree and returns when none is left. It is
// safe to call more than once and after Done.
func (p *Process) Kill() {
	p.killOnce.Do(func() { close(p.killReq) })
	<-p.gone
}

// SetFileSizeLimit sets RLIMIT_FSIZE (soft and hard) to n bytes on every live
// process of the tree, and on every process found in it from then on: a
// write that would make a file larger than n fails (n = 0: no file may grow).
// A process that lacks the privilege cannot raise it again. It fails when n
// is negative, when the tree has ended, or with the processes it could not
// limit (limiting above a process's current hard limit needs privilege).
func (p *Process) SetFileSizeLimit(n int64) error {
	if n < 0 {
		return fmt.Errorf("supervisor: negative file size limit %d", n)
	}
	req := fsizeRequest{bytes: n, done: make(chan error, 1)}
	select {
	case p.fsizeReq <- req:
		return <-req.done
	case <-p.gone:
		return errors.New("supervisor: set file size limit: the tree has ended")
	}
}

// Wait waits for Done and returns the result.
func (p *Process) Wait() Result {
	<-p.done
	return p.result
}
