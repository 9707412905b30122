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
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/supervisor/internal/procfs"
)

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
	// pidMaxNS says that the kernel keeps pid_max per PID namespace.
	pidMaxNS bool

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
		pidMaxNS:      pidMaxPerNamespace(),
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
		return nil, fmt.Errorf("%w, and %s=fallback forbids it", ErrPrivateTmpUnavailable, TrackingEnv)
	}
	if len(spec.BindMounts) > 0 && h.forceFallback {
		return nil, fmt.Errorf("%w, and %s=fallback forbids it", ErrBindMountsUnavailable, TrackingEnv)
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
		TmpMounts:       spec.TmpMounts,
		BindMounts:      spec.BindMounts,
		DevShmBytes:     spec.DevShmBytes,
		CappedDirs:      spec.CappedDirs,
	}
	if spec.Limits.Tasks > 0 && h.pidMaxNS && !spec.runsNest {
		cfg.PIDMax = pidMaxFor(spec.Limits.Tasks)
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
		return fmt.Errorf("%w, which this system refused: %w", ErrPrivateTmpUnavailable, errors.Join(refusals...))
	}
	if len(cfg.BindMounts) > 0 {
		return fmt.Errorf("%w, which this system refused: %w", ErrBindMountsUnavailable, errors.Join(refusals...))
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
	if m.PIDMax > 0 {
		t.taskCeiling = taskCeiling(m.PIDMax)
	}
	// Through the init's root, before the ack (see openMount).
	if cfg.PrivateTmpBytes > 0 {
		if err := t.openMount("its private /tmp", "/tmp", "", cfg.PrivateTmpBytes); err != nil {
			return err
		}
	}
	if m.DevShm {
		if err := t.openMount("its private "+devShm, devShm, "", cfg.DevShmBytes); err != nil {
			return err
		}
		t.devShm = true
	}
	for _, c := range cfg.CappedDirs {
		if err := t.openMount(c.Path, c.Path, c.Path, c.Bytes); err != nil {
			return err
		}
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
