package supervisor

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// The init is the root of every tree: the running binary, re-executed with
// initArg as its first argument (MaybeRunInit runs it), then the program of
// the Spec as its only direct child.
//
// Its arguments name the control socket and the tree tracking. Protocol on
// the control socket (a socketpair; the init's end is its fd
// 3+len(ExtraFiles), and the child never gets it):
//   - host to init: a 4-byte big-endian length and the initConfig as JSON
//     (written as the init starts, so that both proceed at once); later one
//     ack byte, after the host pinned the child;
//   - init to host: one initMessage as a line of JSON: "started" once the
//     child runs (or "error" when it could not start), then "exit" with the
//     child's wait status;
//   - the host never writes again: the init takes end of file on the socket
//     as stratbench's death, and exits.

// initArg is argv[1] of a process that must run as a tree's init.
const initArg = "__stratbench_tree_init"

// initExitCode is the init's exit status when it ends without a child that
// exited (it could not start the child, or stratbench went away).
const initExitCode = 125

// maxInitConfig bounds the config the init reads (the environment is most of
// it; execve itself refuses more than a few MiB).
const maxInitConfig = 16 << 20

// initConfig is what the host tells the init.
type initConfig struct {
	Path            string     `json:"path"`
	Argv            []string   `json:"argv"`
	Env             []string   `json:"env"`
	Dir             string     `json:"dir"`
	Files           int        `json:"files"` // extra fds 3 .. 3+Files-1 the child gets
	FileSizeBytes   int64      `json:"file_size_bytes"`
	PrivateTmpBytes int64      `json:"private_tmp_bytes"`
	TmpMounts       []TmpMount `json:"tmp_mounts,omitempty"`
	// BindMounts are Spec.BindMounts.
	BindMounts []BindMount `json:"bind_mounts,omitempty"`
	// PIDMax, when positive, is the pid_max the init sets in its PID
	// namespace (see tasks.go); the host sends it only where the kernel
	// keeps pid_max per namespace.
	PIDMax int `json:"pid_max,omitempty"`
	// DevShmBytes, when positive, is the size of the private /dev/shm.
	DevShmBytes int64 `json:"dev_shm_bytes,omitempty"`
	// CappedDirs are mounted after the private /tmp.
	CappedDirs []CappedDir `json:"capped_dirs,omitempty"`
}

// initMessage is one line the init writes to the host.
type initMessage struct {
	Started int `json:"started,omitempty"` // the child's pid, as the init's namespace numbers it
	// ProcMounted says that /proc shows the namespace's processes (with
	// "started").
	ProcMounted bool `json:"proc_mounted,omitempty"`
	// PIDMax is the pid_max in force in the namespace (with "started"),
	// 0 where the init set none.
	PIDMax int `json:"pid_max,omitempty"`
	// DevShm says that the init mounted the private /dev/shm (with
	// "started").
	DevShm bool    `json:"dev_shm,omitempty"`
	Error  string  `json:"error,omitempty"` // why the child could not be started
	Exit   *uint32 `json:"exit,omitempty"`  // the child's wait status
}

func init() {
	if isInit(os.Args) {
		// The child's parent-death signal and the capabilities the
		// child inherits both belong to the thread that forks it
		// (golang/go#27505; capabilities are per thread): keep the main
		// goroutine, which forks, on the main thread, which lives as
		// long as the init.
		runtime.LockOSThread()
	}
}

func isInit(args []string) bool { return len(args) > 1 && args[1] == initArg }

// MaybeRunInit runs the tree init when this process was started as one (by
// Host.Start, or by a template for a run it forked: see Template.Fork) and
// otherwise returns at once. Call it first thing in main,
// and in TestMain of every package whose tests start trees. When it ran, it
// never returns.
func MaybeRunInit() {
	switch {
	case isInit(os.Args):
		os.Exit(runInit(os.Args[2:]))
	case isRunInit(os.Args):
		os.Exit(runRunInit(os.Args[2:]))
	}
}

// initArgs returns the arguments of an init whose control socket is fd ctl.
func initArgs(ctl int, tracking TreeTracking) []string {
	return []string{"stratbench-init", initArg, strconv.Itoa(ctl), tracking.String()}
}

func runInit(args []string) int {
	if len(args) != 2 {
		fmt.Fprintf(os.Stderr, "stratbench init: want the control fd and the tree tracking, got %q\n", args)
		return initExitCode
	}
	ctl, err := strconv.Atoi(args[0])
	if err != nil || ctl < 3 {
		fmt.Fprintf(os.Stderr, "stratbench init: bad control fd %q\n", args[0])
		return initExitCode
	}
	in := &initProc{ctl: ctl, child: -1, childFD: -1}
	switch args[1] {
	case TrackingPIDNamespace.String():
		in.tracking = TrackingPIDNamespace
	case TrackingFallback.String():
		in.tracking = TrackingFallback
	default:
		fmt.Fprintf(os.Stderr, "stratbench init: bad tree tracking %q\n", args[1])
		return initExitCode
	}
	return in.run()
}

// initProc is the init's state.
type initProc struct {
	ctl         int // control socket
	tracking    TreeTracking
	cfg         initConfig
	procMounted bool
	pidMax      int  // set in the namespace, 0 if none
	devShm      bool // the private /dev/shm is mounted
	child       int  // the child's pid, -1 before it runs
	childFD     int  // a pidfd of the child, -1 if none
}

func (in *initProc) run() int {
	// Die with stratbench. Go set this in the forked process already and
	// execve kept it (this binary is neither set-id nor file-capable);
	// setting it again does not depend on that. The host's end of the
	// control socket covers the moment before either (see hostGone).
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return in.fail(fmt.Errorf("set parent-death signal: %w", err))
	}
	// Nothing of ours may reach the child: every fd from 3 up becomes
	// close-on-exec. ForkExec hands the child exactly its own fds again.
	if err := closeOnExecFrom(3); err != nil {
		return in.fail(fmt.Errorf("mark fds close-on-exec: %w", err))
	}
	if err := in.readConfig(); err != nil {
		if errors.Is(err, io.EOF) {
			return initExitCode // stratbench went away before it said what to run
		}
		return in.fail(err)
	}
	// The child runs as our uid: it must not ptrace us, read our memory
	// or take the control socket through /proc/1/fd. A non-dumpable
	// process's /proc files belong to root, and attaching to it needs
	// CAP_SYS_PTRACE over its user namespace, which the child lacks.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return in.fail(fmt.Errorf("set non-dumpable: %w", err))
	}
	// Before the mounts: a working directory under /tmp stays reachable
	// as the working directory when a private /tmp hides its path.
	if in.cfg.Dir != "" {
		if err := unix.Chdir(in.cfg.Dir); err != nil {
			return in.fail(fmt.Errorf("chdir %s: %w", in.cfg.Dir, err))
		}
	}
	if in.tracking == TrackingPIDNamespace {
		if err := in.mount(); err != nil {
			return in.fail(err)
		}
		if in.cfg.PIDMax > 0 {
			// Before the program exists, and while we hold
			// CAP_SYS_ADMIN over the namespace. Best effort: where the
			// kernel refuses (a parent namespace with a lower
			// pid_max), the samples alone bound the tasks, and the
			// host learns it from our report (PIDMax 0).
			in.pidMax, _ = limitPIDs(in.cfg.PIDMax)
		}
	} else {
		// Orphans of the tree (setsid and double fork, a killed parent)
		// are reparented to the nearest living subreaper ancestor: us,
		// so they stay our descendants whatever they do to their
		// environment.
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return in.fail(fmt.Errorf("become child subreaper: %w", err))
		}
	}
	if n := in.cfg.FileSizeBytes; n > 0 {
		// Inherited by the child at fork. Soft and hard alike: an
		// unprivileged process cannot raise its hard limit.
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: uint64(n), Max: uint64(n)}); err != nil {
			return in.fail(fmt.Errorf("set RLIMIT_FSIZE: %w", err))
		}
	}
	// The stop signals come to us as values, from before the child exists
	// so that none is lost. As PID 1 of a namespace we receive, from
	// processes of the tree, only the signals we have a handler for; the
	// Go runtime has one for most signals, and by default it exits or
	// crashes on some of them: those come to us as values too, and are
	// dropped. They are handled, not ignored: an ignored signal would stay
	// ignored in the child across execve, a handled one is reset to its
	// default. (Notify for every signal costs up to milliseconds at each
	// start; these, a tenth of one.)
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, append(forwardedSignals, fatalSignals...)...)
	if err := dropCapabilities(); err != nil {
		return in.fail(err)
	}
	if err := in.startChild(); err != nil {
		return in.fail(err)
	}
	in.releaseChildFDs()
	return in.serve(sigs)
}

// serve reports the running child to the host, waits for the host's ack,
// then forwards stop signals and reaps until the child exits.
func (in *initProc) serve(sigs <-chan os.Signal) int {
	if err := in.send(initMessage{Started: in.child, ProcMounted: in.procMounted, PIDMax: in.pidMax, DevShm: in.devShm}); err != nil {
		return initExitCode
	}
	// Wait until the host has pinned the child: until then the child
	// must not be reaped, or the host could not find it.
	var ack [1]byte
	if n, err := readFull(in.ctl, ack[:]); n != 1 || err != nil {
		return initExitCode
	}
	go in.hostGone()
	go in.forward(sigs)
	return in.reap()
}

// readConfig reads the initConfig from the host.
func (in *initProc) readConfig() error {
	var size [4]byte
	if _, err := readFull(in.ctl, size[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > maxInitConfig {
		return fmt.Errorf("config of %d bytes, at most %d", n, maxInitConfig)
	}
	b := make([]byte, n)
	if _, err := readFull(in.ctl, b); err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	var err error
	in.cfg, err = parseInitConfig(b)
	return err
}

// parseInitConfig decodes and checks a config.
func parseInitConfig(b []byte) (initConfig, error) {
	var cfg initConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		return cfg, fmt.Errorf("decode config: %w", err)
	}
	switch {
	case cfg.Path == "" || len(cfg.Argv) == 0:
		return cfg, fmt.Errorf("bad config: path %q, %d args", cfg.Path, len(cfg.Argv))
	case cfg.Files < 0 || cfg.FileSizeBytes < 0 || cfg.PrivateTmpBytes < 0 || cfg.PIDMax < 0 || cfg.DevShmBytes < 0:
		return cfg, fmt.Errorf("bad config: %d files, file size %d, private /tmp %d, pid_max %d, /dev/shm %d",
			cfg.Files, cfg.FileSizeBytes, cfg.PrivateTmpBytes, cfg.PIDMax, cfg.DevShmBytes)
	case cfg.PIDMax > 0 && cfg.PIDMax <= reservedPIDs:
		return cfg, fmt.Errorf("bad config: pid_max %d, want more than %d", cfg.PIDMax, reservedPIDs)
	case (len(cfg.TmpMounts) > 0 || len(cfg.CappedDirs) > 0) && cfg.PrivateTmpBytes == 0:
		return cfg, errors.New("bad config: paths kept under /tmp or capped folders without a private /tmp")
	}
	if err := checkCappedDirs(cfg.CappedDirs); err != nil {
		return cfg, err
	}
	if err := checkBindMounts(cfg.BindMounts); err != nil {
		return cfg, err
	}
	return cfg, checkTmpMounts(cfg.TmpMounts)
}

// mount gives the namespace its own /proc and, when asked, a private /tmp.
func (in *initProc) mount() (err error) {
	// Our mounts must stay ours. A mount namespace that root creates
	// copies the propagation of the host's mounts: where / is shared (as
	// systemd makes it), a mount here would also appear on the host. In a
	// user namespace the kernel has already turned shared mounts into
	// slaves; making everything private costs nothing there.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		if in.cfg.PrivateTmpBytes > 0 || len(in.cfg.BindMounts) > 0 {
			return fmt.Errorf("make mounts private (needed for the private /tmp and bind mounts): %w", err)
		}
		return nil // then no mount is safe; the child sees the host's /proc and /dev/shm
	}
	// A /proc of the namespace, so that pids in /proc are the child's own.
	// Best effort: the kernel refuses a new proc mount where the existing
	// one is partly hidden (mount_too_revealing(), as in containers that
	// mask /proc paths). The child then sees the host's /proc, which
	// changes nothing about what it may do: kill and ptrace take pids of
	// its own namespace, where no process outside the tree has one.
	in.procMounted = unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "") == nil
	// Copies of the bind mounts' sources, taken before a private /tmp
	// hides them, attached once it is mounted (on return).
	bound, err := cloneBindMounts(in.cfg.BindMounts)
	if err != nil {
		return err
	}
	defer closeBound(bound)
	defer func() {
		for _, b := range bound {
			if err == nil {
				err = b.attach()
			}
		}
	}()
	if n := in.cfg.PrivateTmpBytes; n > 0 {
		// Copies of the kept paths, taken while the host's /tmp is
		// still in view, attached once the tmpfs hides it.
		kept, err := cloneTmpMounts(in.cfg.TmpMounts)
		if err != nil {
			return err
		}
		defer closeKept(kept)
		opts := tmpfsOptions(n)
		if err := unix.Mount("tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			return fmt.Errorf("mount the private /tmp (%s): %w", opts, err)
		}
		for _, k := range kept {
			if err := k.attach(); err != nil {
				return err
			}
		}
		// Over what the private /tmp shows at their paths (a job
		// folder under the host's /tmp is one of the kept paths).
		for _, c := range in.cfg.CappedDirs {
			if err := mountCapped(c); err != nil {
				return err
			}
		}
	}
	if n := in.cfg.DevShmBytes; n > 0 {
		// Best effort, as /proc: the host learns from our report
		// whether the tree has its own (Result.PrivateDevShm).
		in.devShm, _ = mountDevShm(n)
	}
	return nil
}

// dropCapabilities empties the capability sets of this thread, the one that
// forks the child, when stratbench is not root: the init's CAP_SYS_ADMIN (in
// its user namespace) must not reach the child. Clearing the ambient set is
// what matters (a non-root execve keeps only ambient capabilities); the
// other sets go too, so that nothing depends on the program's file
// capabilities. Root's child is root, with root's capabilities, as when
// stratbench starts it directly.
func dropCapabilities() error {
	if os.Geteuid() == 0 {
		return nil
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}

// startChild forks and executes the program with stdio and the extra files
// at their own numbers, in a session of its own, with SIGKILL as its
// parent-death signal: in the fallback, if the init is killed, its child
// dies with it (the namespace does that in the other mode).
func (in *initProc) startChild() error {
	files := make([]uintptr, 3+in.cfg.Files)
	for i := range files {
		files[i] = uintptr(i)
	}
	pid, err := syscall.ForkExec(in.cfg.Path, in.cfg.Argv, &syscall.ProcAttr{
		Env:   in.cfg.Env,
		Files: files,
		Sys:   &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		return fmt.Errorf("fork/exec %s: %w", in.cfg.Path, err)
	}
	in.child = pid
	// Opened before the child can be reaped (we reap it only below), so
	// that a forwarded signal never reaches a process that reused its pid.
	if fd, err := unix.PidfdOpen(pid, 0); err == nil {
		in.childFD = fd
	}
	return nil
}

// releaseChildFDs closes our copies of the child's fds: stdin, stdout and
// stderr become /dev/null and the extra files are closed, so that the host
// sees end of file on them when the tree no longer holds them, not when the
// init ends.
func (in *initProc) releaseChildFDs() {
	if null, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0); err == nil {
		for fd := range 3 {
			unix.Dup3(null, fd, 0)
		}
		unix.Close(null)
	}
	for fd := 3; fd < 3+in.cfg.Files; fd++ {
		unix.Close(fd)
	}
}

// forwardedSignals are the signals the init passes on to its child.
var forwardedSignals = []os.Signal{unix.SIGTERM, unix.SIGINT, unix.SIGHUP}

// fatalSignals are the signals on which the Go runtime, when a process
// sends them and they are not notified, exits, dumps its goroutines or
// crashes (the _SigKill, _SigThrow and _SigPanic entries of its signal
// table; a real fault still panics). The runtime ignores the others it
// handles when they are sent by a process; those it leaves at their default
// action (the stop signals, the real-time signals the C library reserves)
// the kernel drops, in a PID namespace, for an init. Only the few notified
// signals the runtime flags _SigNotify cost a round trip with its signal
// thread at start.
var fatalSignals = []os.Signal{unix.SIGQUIT, unix.SIGILL, unix.SIGTRAP, unix.SIGABRT, unix.SIGBUS, unix.SIGFPE,
	unix.SIGSEGV, unix.SIGSTKFLT, unix.SIGSYS}

// forward passes the stop signals on to the child and drops the others.
func (in *initProc) forward(sigs <-chan os.Signal) {
	for s := range sigs {
		sig, ok := s.(syscall.Signal)
		if !ok || !slices.Contains(forwardedSignals, os.Signal(sig)) {
			continue
		}
		if in.childFD >= 0 {
			unix.PidfdSendSignal(in.childFD, sig, nil, 0)
		} else {
			unix.Kill(in.child, sig)
		}
	}
}

// hostGone waits for end of file on the control socket, which means that
// stratbench has died (its parent-death signal may have been armed too late
// to fire), and exits: in a PID namespace that kills the tree.
func (in *initProc) hostGone() {
	var b [64]byte
	for {
		n, err := unix.Read(in.ctl, b[:])
		if err == unix.EINTR || err == nil && n > 0 {
			continue
		}
		os.Exit(initExitCode)
	}
}

// reap reaps every child until the program exits, and reports its status.
// In a PID namespace the init then exits, which kills the namespace. In the
// fallback it goes on reaping (the host kills the rest of the tree while we
// still hold it together as its subreaper) until it is killed, or until
// stratbench is gone.
func (in *initProc) reap() int {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			// ECHILD: no child left, so no descendant either, and none
			// can appear. Wait to be killed.
			select {}
		case pid == in.child:
			status := uint32(ws)
			in.send(initMessage{Exit: &status})
			if in.tracking == TrackingPIDNamespace {
				return 0
			}
		}
	}
}

// send writes one message to the host. MSG_NOSIGNAL: a host that is gone
// must not end us by SIGPIPE.
func (in *initProc) send(m initMessage) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	for len(b) > 0 {
		n, err := unix.SendmsgN(in.ctl, b, nil, nil, unix.MSG_NOSIGNAL)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// fail reports err to the host (and to stderr, which the host captures,
// for the case where the control socket itself is what failed).
func (in *initProc) fail(err error) int {
	if in.send(initMessage{Error: err.Error()}) != nil {
		fmt.Fprintln(os.Stderr, "stratbench init:", err)
	}
	return initExitCode
}

// readFull reads len(b) bytes from fd.
func readFull(fd int, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := unix.Read(fd, b[n:])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return n, err
		case m == 0:
			if n == 0 {
				return 0, io.EOF
			}
			return n, io.ErrUnexpectedEOF
		}
		n += m
	}
	return n, nil
}
