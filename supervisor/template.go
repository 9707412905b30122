// This file is long because a warm template is one protocol with one
// owner: starting the template, the fork exchange, and checking each run the
// template names against the kernel before it becomes a tree; the checks are
// read beside the exchange they guard. The run's init is in runinit.go.

package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/supervisor/internal/procfs"
)

// A template is a supervised tree whose program has done the slow part of
// starting (an interpreter and its imports) and then forks one run per
// request, each run a tree of its own: its own PID namespace, its own
// limits, sampling, output and end, exactly as if Host.Start had started
// it. Warm starts cost a fork instead of an interpreter's start.
//
// The template's program is hostile input, like any program of a tree: it
// has run code the user did not write (the modules it imported). Nothing
// it says decides a limit or a membership; every run it names is checked
// against the kernel before it counts as a run. See Fork.
//
// Fork protocol, on a SOCK_SEQPACKET socket (the program's end is fd
// TemplateSocketFD), one JSON message per packet:
//   - template to host, once it is ready: templateHello;
//   - host to template: forkRequest, with SCM_RIGHTS descriptors: the run's
//     stdout and stderr, stratbench's executable, the run init's control
//     socket, the run's go pipe (read end), then the run's extra files;
//   - template to host: forkAnswer, naming the run's first process by its
//     pid in the template's namespace, or saying why there is none;
//   - the host closes the socket to end the template.
//
// The template makes each run thus: a child of the template (A) unshares a
// new PID namespace (through a new user namespace when it must) and forks
// the namespace's first process (B), then exits, so that B's parent becomes
// the template's init. B forks the run's program (C), waits until C has set
// itself up (its descriptors at their numbers, working directory,
// environment, a session of its own, no capabilities unless stratbench is
// root), and executes stratbench's executable as the run init (runinit.go),
// with its control socket at runInitFD and stdio on the run's pipes. C
// waits for one byte on its go pipe before it runs anything of the run's
// own: the host writes it once the run is a tree of its own, checked (its
// root and program pinned, no capabilities unless stratbench is root) and
// with its file size limit in force; the tree's first sample, which
// enforces the other limits, follows at once.

// TemplateSocketFD is the descriptor where a template's program finds its
// fork socket (see StartTemplate).
const TemplateSocketFD = 3

// ErrNoNamespaces says that a template cannot run: warm runs need the
// PID-namespace tree tracking (TrackingPIDNamespace), which alone makes
// each run's membership a kernel fact apart from the template's. Without
// it, start every run with Host.Start.
var ErrNoNamespaces = errors.New("warm templates need the PID-namespace tree tracking")

// ErrTemplateGone says that the template has ended (or was closed): it
// forks no more runs.
var ErrTemplateGone = errors.New("the template has ended")

// ForkRefusedError is the template's own answer that it cannot fork a run
// (for example: a module it imported is now shadowed by a file of the
// strategy's folder, or the system refused the fork). The template lives
// on, but a refusal that depends on the template's state repeats: start
// the run with Host.Start, or start a new template.
type ForkRefusedError struct {
	Reason string // as the template gave it: hostile text, for display only
	// Stale is the template's claim that what the run's program needs
	// preloaded has changed since the template started (python/bridge.py:
	// the strategy's leading imports): a new template would serve it. A
	// claim only, which decides nothing but whether to start one.
	Stale bool
}

func (e *ForkRefusedError) Error() string {
	return "the template refused to fork: " + e.Reason
}

const (
	// maxForkRequest bounds a fork request (the run's environment and
	// arguments are most of it); a SOCK_SEQPACKET packet must fit in the
	// socket's send buffer, about 208 KiB by default.
	maxForkRequest = 128 << 10
	// maxTemplateMessage bounds a message of the template.
	maxTemplateMessage = 64 << 10
	// forkFixedFiles counts the descriptors of a fork request before the
	// run's extra files.
	forkFixedFiles = 5
)

// templateHello is the template's first message.
type templateHello struct {
	Ready bool `json:"ready"`
	// Preloaded names what the template imported (as it says).
	Preloaded []string `json:"preloaded"`
	Error     string   `json:"error"` // why the template cannot serve
}

// forkRequest asks the template for one run.
type forkRequest struct {
	ID            uint64   `json:"id"`
	Args          []string `json:"args"`
	Env           []string `json:"env"`
	Dir           string   `json:"dir"`
	Files         int      `json:"files"` // extra files, after the forkFixedFiles descriptors
	FileSizeBytes int64    `json:"file_size_bytes"`
	// Init is the run init's argv, to which the template appends the
	// program's pid in the run's namespace.
	Init []string `json:"init"`
	// Binds are the run's bind mounts, [source, target] pairs, which the
	// run's first process mounts in the run's mount namespace.
	Binds [][2]string `json:"binds,omitempty"`
	// PIDMax is the pid_max the run's namespace is to have (see
	// tasks.go), DevShmBytes the size of its private /dev/shm; 0 for none.
	// The host checks what it counts on: the run init reports the
	// pid_max in force, and the host opens the run's /dev/shm itself.
	PIDMax      int   `json:"pid_max,omitempty"`
	DevShmBytes int64 `json:"dev_shm_bytes,omitempty"`
}

// forkAnswer is the template's answer to a forkRequest, and to a
// checkRequest (no PID then).
type forkAnswer struct {
	ID    uint64 `json:"id"`
	PID   int    `json:"pid"`   // the run's first process, in the template's namespace
	Error string `json:"error"` // why there is no run
	Stale bool   `json:"stale"` // see ForkRefusedError.Stale
}

// checkRequest asks the template, without descriptors, whether it would
// refuse a fork now as stale (Template.Stale).
type checkRequest struct {
	ID    uint64 `json:"id"`
	Check bool   `json:"check"`
}

// maxForking is how many Forks of one template may be in flight at once.
// The fork socket carries one exchange at a time, but the longer part of
// a fork comes after it: the run's init, stratbench's own executable,
// starting (about 5 ms of Go start-up) and the checks of its report.
// Forks overlap there, so that the slots of a sweep of short runs do not
// queue behind one another. The bound is for the template's own limits:
// until a run is adopted, its processes count toward the template's tree
// (up to three for a fork in flight: the intermediate process, the run's
// init and the program, each a copy of the template until the init's
// execve), and a copy counts with the template's resident memory, as the
// kernel reports it. A template too large for that under its memory limit
// forks one at a time, as before (forksInFlight).
const maxForking = 2

// forksInFlight is how many Forks a template whose program has rss bytes
// resident may have in flight under its memory limit (0: none): as many as
// the limit holds with three copies of the template per fork, at most
// maxForking, at least one (one fork at a time already counted that much).
func forksInFlight(rss, limit int64) int {
	n := maxForking
	for n > 1 && limit > 0 && rss*int64(1+3*n) > limit {
		n--
	}
	return n
}

// Template is a started template (see StartTemplate). Its methods are safe
// for concurrent use; at most maxForking Forks are in flight at once
// (fewer for a large template: forksInFlight), and their exchanges on the
// fork socket are served one at a time.
type Template struct {
	host      *Host
	tree      *tree // the template's own tree, owned by its supervise goroutine
	preloaded []string
	exeDev    uint64 // stratbench's executable, which each run's init must run
	exeIno    uint64
	initNS    []int         // NSpid of the template's init
	devShmDev uint64        // the device of the template's private /dev/shm, 0 without one
	forking   chan struct{} // a token per Fork in flight (forksInFlight), made by ready

	// mu guards what follows, and makes the exchanges on the fork socket
	// one at a time.
	mu     sync.Mutex
	closed bool
	conn   *net.UnixConn // the fork socket
	exe    *os.File      // stratbench's executable, handed to each run's first process
	r      *procfs.Reader
	init   *procfs.Proc // the template's init, pinned
	nextID uint64
	// recv is receive's buffer (maxTemplateMessage bytes, made at the
	// first receive), kept: every fork's answer is read into it, where a
	// buffer per answer cost a sweep run 64 kB of garbage.
	recv []byte
}

// StartTemplate starts spec as a template: a tree like Host.Start's, whose
// program gets the fork socket as fd TemplateSocketFD and must speak the
// fork protocol (python/bridge.py does, in its template mode). It returns
// once the program said it is ready; ctx bounds that wait. The template's
// own limits, sampling and output are those of spec, and cover the
// template alone, never its runs.
//
// A template needs the PID-namespace tree tracking (ErrNoNamespaces
// otherwise). spec may have no ExtraFiles, PrivateTmpBytes, TmpMounts or
// StateFile.
// The program of a sandboxed worker cannot be a template: the sandbox
// refuses fork (and cannot let a run's first process execute stratbench),
// so sandboxed runs always start cold, with Host.Start.
func (h *Host) StartTemplate(ctx context.Context, spec Spec) (*Template, error) {
	tp, err := h.startTemplate(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("supervisor: start template %s: %w", spec.Path, err)
	}
	return tp, nil
}

func (h *Host) startTemplate(ctx context.Context, spec Spec) (*Template, error) {
	switch {
	case h.forceFallback:
		return nil, fmt.Errorf("%w, and %s=fallback forbids it", ErrNoNamespaces, TrackingEnv)
	case len(spec.ExtraFiles) > 0:
		return nil, errors.New("a template gets no extra files but its fork socket")
	case spec.PrivateTmpBytes > 0 || len(spec.TmpMounts) > 0 || spec.StateFile != "":
		return nil, errors.New("a template has no private /tmp and no state file")
	}
	// The running binary, even if its file was replaced since: each
	// run's first process executes it as the run's init.
	exe, err := os.Open("/proc/self/exe")
	if err != nil {
		return nil, fmt.Errorf("open stratbench's executable: %w", err)
	}
	st, err := exe.Stat()
	if err != nil {
		exe.Close()
		return nil, fmt.Errorf("stat stratbench's executable: %w", err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	conn, theirs, err := forkSocket()
	if err != nil {
		exe.Close()
		return nil, err
	}
	spec.ExtraFiles = []*os.File{theirs}
	spec.runsNest = true
	t, err := h.startTree(ctx, spec)
	theirs.Close()
	if err != nil {
		exe.Close()
		conn.Close()
		return nil, err
	}
	t.exclude = make(chan excludeRequest)
	var shmDev uint64
	for _, m := range t.mounts { // before the tree's goroutine owns them
		if m.path == devShm {
			shmDev = mountDev(m.fd)
		}
	}
	go t.supervise()
	tp := &Template{host: h, tree: t, exeDev: sys.Dev, exeIno: sys.Ino, conn: conn, exe: exe, r: procfs.NewReader(), devShmDev: shmDev}
	if err := tp.ready(ctx); err != nil {
		tp.Close()
		// A template that its own limits killed before it was ready leaves
		// only a closed socket behind: its tree's violation says why.
		if v := tp.tree.proc.Wait().Violation; v != nil {
			err = fmt.Errorf("%w (the template broke a limit: %s)", err, v.Message)
		}
		return nil, err
	}
	return tp, nil
}

// forkSocket returns the two ends of a fork socket: ours, with deadlines,
// and the template's.
func forkSocket() (*net.UnixConn, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("fork socket: %w", err)
	}
	ours := os.NewFile(uintptr(fds[0]), "fork socket")
	c, err := net.FileConn(ours) // a copy: ours is closed below
	ours.Close()
	if err != nil {
		unix.Close(fds[1])
		return nil, nil, fmt.Errorf("fork socket: %w", err)
	}
	return c.(*net.UnixConn), os.NewFile(uintptr(fds[1]), "template fork socket"), nil
}

// ready pins the template's init and waits for the template's hello.
func (tp *Template) ready(ctx context.Context) error {
	if tp.tree.tracking != TrackingPIDNamespace {
		return fmt.Errorf("%w, which this system refused", ErrNoNamespaces)
	}
	var err error
	if tp.init, err = tp.r.Open(tp.tree.rootPID); err != nil {
		return fmt.Errorf("pin the template's init: %w", err)
	}
	if tp.initNS, err = tp.init.NSPIDs(tp.r, nil); err != nil {
		return fmt.Errorf("the template's init: %w", err)
	}
	stop := tp.deadlineOn(ctx)
	defer stop()
	var hello templateHello
	if err := tp.receive(ctx, &hello); err != nil {
		return fmt.Errorf("the template did not say it is ready: %w", err)
	}
	switch {
	case hello.Error != "":
		return fmt.Errorf("the template cannot serve: %s", cutText(hello.Error, 1000))
	case !hello.Ready:
		return errors.New("the template's first message says neither ready nor why not")
	}
	tp.preloaded = hello.Preloaded
	// The template has imported what it will hold: its size now decides
	// how many forks may be in flight. Unreadable, it gets one.
	n := 1
	if prog, err := tp.r.Open(tp.tree.proc.pid); err == nil {
		if st, err := prog.Status(tp.r); err == nil {
			n = forksInFlight(st.RSS, tp.tree.spec.Limits.MemoryBytes)
		}
		prog.Close()
	}
	tp.forking = make(chan struct{}, n)
	return tp.conn.SetDeadline(time.Time{})
}

// Process returns the template's own tree: its samples, output, limits and
// end (runs forked from it are not part of it).
func (tp *Template) Process() *Process { return tp.tree.proc }

// Preloaded returns the modules the template says it imported: what it
// says, for display only.
func (tp *Template) Preloaded() []string { return slices.Clone(tp.preloaded) }

// Close kills the template, and with it every run forked from it that is
// still in flight (their namespaces lie within the template's; they end
// with Result.TemplateLost), and releases what the template held. It is
// safe to call more than once, and after the template ended by itself,
// which it must be.
func (tp *Template) Close() {
	tp.tree.proc.Kill()
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.closed {
		return
	}
	tp.closed = true
	tp.conn.Close()
	tp.exe.Close()
	if tp.init != nil {
		tp.init.Close()
	}
}

// endsWithin reports whether the template's tree is gone within d.
func (tp *Template) endsWithin(d time.Duration) bool {
	select {
	case <-tp.tree.proc.gone:
		return true
	case <-time.After(d):
		return false
	}
}

// RunSpec says how to fork one run from a template.
type RunSpec struct {
	// Args are the run's arguments; the template's program decides what
	// they mean (python/bridge.py: python.RunArgs).
	Args []string
	// Env is the run's complete environment, plus EnvMarker, as Spec.Env:
	// it replaces the template's (python/bridge.py applies what differs
	// from the environment the template started with over its current
	// one, keeping what its imports set in the variables the two share).
	// What the template's program read from its environment when it
	// started stays as it was (for Python: the hash seed, PYTHONPATH,
	// what its imports read), and a process's initial environment, which
	// /proc/PID/environ shows, is the template's: start the template with
	// the environment its runs will have.
	Env []string
	// Dir is the run's working directory; empty means the template's.
	// python/bridge.py refuses a run whose folder is not its own: its
	// imports saw that one.
	Dir string
	// ExtraFiles become fds 3, 4, ... in the run, as Spec.ExtraFiles: its
	// only fds besides stdin (/dev/null), stdout and stderr (two pipes),
	// and those the template's program itself holds open (a copy of what
	// its imports opened, as a cold start would have them too). The
	// template's program decides how many a run may get. Fork does not
	// close them: the caller closes its copies once Fork returned.
	ExtraFiles []*os.File
	// Limits are enforced over the run's tree, as in Spec. The run's init
	// is not among its processes, but its memory counts: the template, which
	// made the run's user namespace, could reach into it.
	Limits Limits
	// FileSizeBytes, when positive, is RLIMIT_FSIZE (soft and hard) of
	// every process of the run, as in Spec: the host sets it on the
	// program before the run runs anything of its own, and on every
	// process found in the run later.
	FileSizeBytes int64
	// DevShmBytes, when positive, gives the run a private /dev/shm, as
	// Spec.DevShmBytes: the template mounts it in the run's mount
	// namespace, and the host counts it where it finds one that is the
	// run's own (Result.PrivateDevShm); otherwise the run shares the
	// template's.
	DevShmBytes int64
	// SampleInterval is the sampling period of the run (default 20 ms).
	SampleInterval time.Duration
	// Output receives the run's captured lines, as Spec.Output.
	Output func(Line)
	// BindMounts are files the run sees in place of others, in its own
	// mount namespace, as Spec.BindMounts: the template's program mounts
	// them in the run's first process (python/bridge.py does), and a run
	// it cannot give them fails to start.
	BindMounts []BindMount
}

func (s *RunSpec) check() error {
	spec := Spec{Path: "/", Limits: s.Limits, SampleInterval: s.SampleInterval, FileSizeBytes: s.FileSizeBytes, ExtraFiles: s.ExtraFiles,
		DevShmBytes: s.DevShmBytes, BindMounts: s.BindMounts}
	return spec.check()
}

// Fork starts one run, forked from the template: a tree of its own,
// returned as a Process with the semantics of Host.Start's (samples,
// limits, output, Kill, Wait, Result; TrackingPIDNamespace), whose
// program is a copy of the template's. Killing the run kills its PID
// namespace and nothing of the template; a run's processes never count
// toward the template or another run, nor theirs toward it. The run dies
// with stratbench (its namespace lies within the template's, whose init
// dies with stratbench), and with the template: see Result.TemplateLost.
//
// Before the run counts as a run, Fork checks against the kernel what the
// template said: the process it named is a child of the template's init
// (so the template's intermediate process is gone and nothing but our
// inits reaps it), the first process of a new PID namespace directly below
// the template's, no other run's root, and, once it reported, the run init
// executing stratbench's own executable, with the program its child
// (without capabilities when stratbench is not root). Until then its
// processes count toward the template.
//
// ctx bounds the fork. A template that refuses (ForkRefusedError) lives
// on. Any other failure (ctx, a broken exchange, a check that fails)
// leaves the template killed, since its answers can no longer be trusted
// or matched: start a new one. After the template ended, Fork returns
// ErrTemplateGone.
func (tp *Template) Fork(ctx context.Context, spec RunSpec) (*Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := spec.check(); err != nil {
		return nil, fmt.Errorf("supervisor: fork: %w", err)
	}
	select {
	case tp.forking <- struct{}{}:
		defer func() { <-tp.forking }()
	case <-tp.tree.proc.gone:
		return nil, fmt.Errorf("supervisor: fork: %w", ErrTemplateGone)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p, err := tp.fork(ctx, spec)
	if err == nil {
		return p, nil
	}
	var unsent *unsentError
	switch {
	case errors.As(err, &unsent):
		// Nothing went to the template: it is as it was.
		err = unsent.err
	case brokenExchange(err):
		// The exchange broke off, or the template broke it: its later
		// answers cannot be matched to requests, nor trusted.
		tp.tree.proc.Kill()
		if !errors.Is(err, ErrTemplateGone) {
			err = fmt.Errorf("%w; the template was killed", err)
		}
	}
	return nil, fmt.Errorf("supervisor: fork: %w", err)
}

// brokenExchange reports whether err, a fork's, leaves the template
// untrustworthy: anything but a refusal (ForkRefusedError) and an end
// before the request was sent (unsentError).
func brokenExchange(err error) bool {
	var refused *ForkRefusedError
	var unsent *unsentError
	return !errors.As(err, &refused) && !errors.As(err, &unsent)
}

// fork asks the template for one run and sets the run up.
func (tp *Template) fork(ctx context.Context, spec RunSpec) (*Process, error) {
	if spec.SampleInterval == 0 {
		spec.SampleInterval = DefaultSampleInterval
	}
	if spec.Limits.LineBytes == 0 {
		spec.Limits.LineBytes = DefaultLineBytes
	}
	rf, err := newRunFiles()
	if err != nil {
		return nil, err
	}
	defer rf.close()
	t := tp.host.newTree(Spec{Limits: spec.Limits, SampleInterval: spec.SampleInterval, FileSizeBytes: spec.FileSizeBytes,
		Output: spec.Output}, rf.ctl)
	rf.ctl = nil // the tree's now
	t.template, t.countRoot = tp, true
	t.tracking, t.proc.tracking = TrackingPIDNamespace, TrackingPIDNamespace
	if spec.FileSizeBytes > 0 {
		t.fsize = spec.FileSizeBytes
	}
	stopRun := context.AfterFunc(ctx, func() { t.ctl.SetDeadline(time.Unix(1, 0)) })
	defer stopRun()

	root, err := tp.exchange(ctx, t, spec, rf)
	if err == nil {
		// The template serves the next exchange while this run's init starts.
		err = tp.adoptRun(ctx, t, root, rf, spec)
	}
	if err != nil {
		t.abortRun()
		return nil, withRunStderr(err, rf)
	}
	t.proc.capture.start(rf.outR, rf.errR)
	rf.outR, rf.errR = nil, nil
	go t.readControl()
	go t.supervise()
	return t.proc, nil
}

// exchange sends the template one fork request, reads its answer and
// finds the run's root (see findRoot), one exchange on the fork socket at
// a time. A ctx that ends interrupts the exchange, never another's: its
// hold on the socket's deadline ends with the exchange.
func (tp *Template) exchange(ctx context.Context, t *tree, spec RunSpec, rf *runFiles) (root int, err error) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.closed {
		return 0, ErrTemplateGone
	}
	select {
	case <-tp.tree.proc.gone:
		return 0, ErrTemplateGone
	default:
	}
	if err := ctx.Err(); err != nil {
		return 0, &unsentError{err} // ended while waiting for its turn
	}
	stop := tp.deadlineOn(ctx)
	defer stop()

	tp.nextID++
	req := forkRequest{
		ID:            tp.nextID,
		Args:          spec.Args,
		Env:           append(slices.Clip(spec.Env), EnvMarker+"="+t.marker),
		Dir:           spec.Dir,
		Files:         len(spec.ExtraFiles),
		FileSizeBytes: spec.FileSizeBytes,
		Init:          runInitArgs(),
		DevShmBytes:   spec.DevShmBytes,
	}
	if spec.Limits.Tasks > 0 && tp.host.pidMaxNS {
		req.PIDMax = pidMaxFor(spec.Limits.Tasks)
	}
	for _, b := range spec.BindMounts {
		req.Binds = append(req.Binds, [2]string{b.Source, b.Target})
	}
	fixed := [forkFixedFiles]*os.File{rf.outW, rf.errW, tp.exe, rf.initCtl, rf.goR}
	files := append(fixed[:], spec.ExtraFiles...)
	err = tp.send(req, files)
	rf.closeTheirs() // the template has its copies, or none
	if err != nil {
		return 0, tp.ctxErr(ctx, fmt.Errorf("send the fork request: %w", err))
	}
	var ans forkAnswer
	if err := tp.receive(ctx, &ans); err != nil {
		return 0, fmt.Errorf("the template did not answer: %w", err)
	}
	switch {
	case ans.ID != req.ID:
		return 0, fmt.Errorf("the template answered request %d, want %d", ans.ID, req.ID)
	case ans.Error != "":
		return 0, &ForkRefusedError{Reason: cutText(ans.Error, 1000), Stale: ans.Stale}
	}
	return tp.findRoot(t, ans.PID)
}

// Stale asks the template whether it would refuse a fork now as stale (see
// ForkRefusedError.Stale), and why: a claim, which a caller may use to
// start a new template before the run that would need it. It is one
// exchange on the fork socket, after the forks' exchanges ahead of it;
// ctx bounds it. A broken exchange kills the template, as in Fork.
func (tp *Template) Stale(ctx context.Context) (bool, string, error) {
	ans, err := tp.check(ctx)
	if err != nil {
		var unsent *unsentError
		if errors.As(err, &unsent) {
			err = unsent.err
		} else {
			tp.tree.proc.Kill()
		}
		return false, "", fmt.Errorf("supervisor: check the template: %w", err)
	}
	return ans.Stale, cutText(ans.Error, 1000), nil
}

func (tp *Template) check(ctx context.Context) (forkAnswer, error) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	var ans forkAnswer
	if tp.closed {
		return ans, &unsentError{ErrTemplateGone}
	}
	select {
	case <-tp.tree.proc.gone:
		return ans, &unsentError{ErrTemplateGone}
	default:
	}
	if err := ctx.Err(); err != nil {
		return ans, &unsentError{err}
	}
	stop := tp.deadlineOn(ctx)
	defer stop()
	tp.nextID++
	b, err := json.Marshal(checkRequest{ID: tp.nextID, Check: true})
	if err != nil {
		return ans, &unsentError{err}
	}
	if _, _, err := tp.conn.WriteMsgUnix(b, nil, nil); err != nil {
		return ans, tp.ctxErr(ctx, fmt.Errorf("send the check request: %w", err))
	}
	if err := tp.receive(ctx, &ans); err != nil {
		return ans, fmt.Errorf("the template did not answer: %w", err)
	}
	switch {
	case ans.ID != tp.nextID:
		return ans, fmt.Errorf("the template answered request %d, want %d", ans.ID, tp.nextID)
	case ans.PID != 0:
		return ans, fmt.Errorf("the template answered a check with a run (pid %d)", ans.PID)
	case ans.Error != "" && !ans.Stale:
		return ans, fmt.Errorf("the template refused the check: %s", cutText(ans.Error, 1000))
	}
	return ans, nil
}

// adoptRun checks the run whose root exchange found and makes it t's: its
// root (the run init) and program pinned, the program's file size limit
// set, the run left out of the template's tree, the run init acknowledged
// and the program let go. It runs beside other Forks' exchanges and
// adoptions: it uses t's own reader and the template's tree through its
// exclude channel, whose goroutine takes one request at a time (a root
// that two Forks found is the root of one run only).
func (tp *Template) adoptRun(ctx context.Context, t *tree, root int, rf *runFiles, spec RunSpec) error {
	fd, err := unix.PidfdOpen(root, 0)
	if err != nil {
		return fmt.Errorf("pidfd of the run's root %d: %w", root, err)
	}
	if !t.members[root].proc.Alive(t.r) {
		unix.Close(fd)
		return fmt.Errorf("the run's root %d ended at once", root)
	}
	go t.watchRoot(rootFile(fd))

	// The run init's report: it runs, and its child is the program.
	m, err := t.readMessage()
	switch {
	case err != nil:
		return tp.ctxErr(ctx, fmt.Errorf("the run's init did not start: %w", err))
	case m.Error != "":
		return fmt.Errorf("the run's init: %s", cutText(m.Error, 1000))
	case m.Started <= 0:
		return fmt.Errorf("the run's init said %+v, want the program's pid", m)
	}
	if dev, ino, err := t.members[root].proc.Exe(); err != nil {
		return fmt.Errorf("the run's root %d: %w", root, err)
	} else if dev != tp.exeDev || ino != tp.exeIno {
		return fmt.Errorf("the run's root %d does not execute stratbench's executable", root)
	}
	if t.proc.pid, err = t.childPID(m.Started); err != nil {
		return err
	}
	t.proc.procMounted = m.ProcMounted
	if err := tp.checkRunNamespaces(t, root, spec, m); err != nil {
		return err
	}
	t.walk(false, false) // pins the program and sets its file size limit
	prog := t.members[t.proc.pid]
	if prog == nil {
		return fmt.Errorf("the run's program %d could not be pinned", t.proc.pid)
	}
	if os.Geteuid() != 0 {
		// As the tree's init makes sure for its child: the program has
		// no capabilities (its user namespace would give it all).
		caps, err := prog.proc.Caps(t.r)
		if err != nil {
			return fmt.Errorf("the run's program %d: %w", t.proc.pid, err)
		}
		if caps != (procfs.Caps{}) {
			return fmt.Errorf("the run's program %d has capabilities %+v", t.proc.pid, caps)
		}
	}
	req := excludeRequest{pid: root, start: t.members[root].proc.Stat.StartTime, done: make(chan error, 1)}
	select {
	case tp.tree.exclude <- req:
		err = <-req.done
	case <-tp.tree.proc.gone:
		err = ErrTemplateGone
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		return err
	}
	if _, err := t.ctl.Write([]byte{'\n'}); err != nil {
		return tp.ctxErr(ctx, fmt.Errorf("let the run's init go on: %w", err))
	}
	if _, err := rf.goW.Write([]byte{1}); err != nil {
		return fmt.Errorf("let the run go: %w", err)
	}
	return t.ctl.SetDeadline(time.Time{})
}

// checkRunNamespaces checks what the run's namespaces hold against what
// was asked, before the run runs anything of its own: an IPC namespace of
// its own (or the fork fails: the template did not make the run as it
// must); the task ceiling, from the pid_max the run init found in force;
// the run's private /dev/shm, counted from now on where it is a tmpfs
// other than the template's.
func (tp *Template) checkRunNamespaces(t *tree, root int, spec RunSpec, m initMessage) error {
	mine, err1 := t.members[root].proc.Namespace("ipc")
	theirs, err2 := tp.init.Namespace("ipc")
	switch {
	case err1 != nil || err2 != nil:
		return fmt.Errorf("the run's IPC namespace: %w", errors.Join(err1, err2))
	case mine == theirs:
		return fmt.Errorf("the run's root %d shares the template's IPC namespace", root)
	}
	if want := pidMaxFor(spec.Limits.Tasks); spec.Limits.Tasks > 0 && tp.host.pidMaxNS && m.PIDMax == want {
		t.taskCeiling = taskCeiling(want)
	}
	if spec.DevShmBytes > 0 {
		m, err := t.findMount("its private "+devShm, devShm)
		if err != nil {
			return nil // none of its own: it shares the template's
		}
		var host unix.Stat_t
		dev := mountDev(m.fd)
		if dev == 0 || dev == tp.devShmDev || unix.Stat(devShm, &host) == nil && host.Dev == dev {
			unix.Close(m.fd) // the template's or the host's: not the run's to count
			return nil
		}
		m.size = spec.DevShmBytes
		t.mounts, t.devShm = append(t.mounts, m), true
	}
	return nil
}

// findRoot finds the process the template named nsPID in its namespace
// among the children of the template's init, checks that it is the first
// process of a new PID namespace directly below the template's, and makes
// it t's root, pinned.
func (tp *Template) findRoot(t *tree, nsPID int) (int, error) {
	if nsPID <= 1 {
		return 0, fmt.Errorf("the template named %d as the run's root", nsPID)
	}
	kids, err := tp.init.Children(tp.r, 1, nil)
	if err != nil {
		return 0, fmt.Errorf("list the template init's children: %w", err)
	}
	level := len(tp.initNS) // the run's namespace, one below the template's
	var ns []int
	for _, kid := range kids {
		p, err := t.r.Open(kid)
		if err != nil {
			continue
		}
		// Checked on the pinned process: a pid reused since the listing
		// is not the init's child any more.
		ns, err = p.NSPIDs(t.r, ns[:0])
		if err != nil || p.Stat.PPID != tp.tree.rootPID || len(ns) != level+1 || ns[level-1] != nsPID || ns[level] != 1 {
			p.Close()
			continue
		}
		t.rootPID, t.proc.initPID = kid, kid
		t.members[kid] = &member{proc: p, root: true, live: true, pidfd: -1}
		return kid, nil
	}
	return 0, fmt.Errorf("the template named process %d of its namespace as the run's root, but no child of its init is the first process of a new PID namespace with that number", nsPID)
}

// watchRoot waits until the run's root has exited and says so on rootExit,
// with an empty ProcessState: the root is not our child, and its status
// is of no use (the program's comes from the run init). When the root has
// exited, the kernel has killed and reaped every other process of its
// namespace. watchRoot owns root and closes it.
//
// The wait lasts the whole run. It goes through the runtime's poller
// (a pidfd is readable once its process has exited), where a waiting
// goroutine costs nothing; a poll(2) blocked in the kernel would hold a
// thread in a system call for as long, which the runtime's monitor keeps
// checking, waking every 20 µs to a few ms (see engine's answers pipe).
func (t *tree) watchRoot(root *os.File) {
	defer root.Close()
	// SyscallConn fails only for a nil or closed file: root is neither.
	if raw, err := root.SyscallConn(); err == nil {
		// Read calls its function, then again each time the poller says
		// the pidfd is readable. It fails after the first call when the
		// poller cannot wait on the file: then poll(2) waits.
		if raw.Read(func(fd uintptr) bool { return pidfdReadable(fd, 0) }) != nil {
			raw.Control(func(fd uintptr) { pidfdReadable(fd, -1) })
		}
	}
	t.rootExit <- &os.ProcessState{}
}

// pidfdReadable reports whether a pidfd is readable within timeout (-1:
// waiting as long as it takes): true once the process has exited, and on
// any error, which no later wait would end.
func pidfdReadable(fd uintptr, timeout time.Duration) bool {
	exited, err := pidfdWait(fd, timeout)
	return exited || err != nil
}

// pidfdWait polls a pidfd (readable once its process has exited) for up
// to timeout, or with a negative timeout until it is readable. poll(2)
// returns EINTR whenever a signal reaches the waiting thread, as the Go
// runtime's preemption signal does: the wait then goes on for the time
// left. It reports whether the pidfd became readable, and poll's other
// errors.
func pidfdWait(fd uintptr, timeout time.Duration) (bool, error) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(timeout)
	for {
		ms := -1
		if timeout >= 0 {
			ms = max(int((time.Until(deadline)+time.Millisecond-1)/time.Millisecond), 0)
		}
		n, err := unix.Poll(fds, ms)
		switch {
		case err == unix.EINTR:
		case err != nil:
			return false, err
		default:
			return n > 0, nil
		}
	}
}

// rootFile makes an *os.File of a run root's pidfd, non-blocking, so that
// the runtime's poller can wait on it (os.NewFile registers a descriptor
// with the poller when it is non-blocking). O_NONBLOCK changes nothing
// else here: the pidfd is only polled.
func rootFile(pidfd int) *os.File {
	unix.SetNonblock(pidfd, true) // when it fails, watchRoot waits in poll(2)
	return os.NewFile(uintptr(pidfd), "run root pidfd")
}

// abortRun releases a run whose adoption failed. The caller kills the
// template, which ends the run's root; its watchRoot then returns.
func (t *tree) abortRun() {
	for pid, m := range t.members {
		t.drop(pid, m)
	}
	t.closeFDs()
}

// send writes one message, with files as SCM_RIGHTS.
func (tp *Template) send(req forkRequest, files []*os.File) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if len(b) > maxForkRequest {
		return fmt.Errorf("fork request of %d bytes (the environment and arguments), at most %d", len(b), maxForkRequest)
	}
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	_, _, err = tp.conn.WriteMsgUnix(b, unix.UnixRights(fds...), nil)
	runtime.KeepAlive(files)
	return err
}

// receive reads one message of the template into v. A message with
// descriptors, or cut, breaks the protocol. It runs with mu held (an
// exchange), or before the template is shared (ready): its buffer is
// tp.recv.
func (tp *Template) receive(ctx context.Context, v any) error {
	if tp.recv == nil {
		tp.recv = make([]byte, maxTemplateMessage)
	}
	buf := tp.recv
	oob := make([]byte, unix.CmsgSpace(4*8))
	n, oobn, flags, _, err := tp.conn.ReadMsgUnix(buf, oob)
	if oobn > 0 {
		closeRights(oob[:oobn])
	}
	switch {
	case err != nil:
		return tp.ctxErr(ctx, err)
	case n == 0:
		return ErrTemplateGone // end of file: the template has closed its end, or ended
	case oobn > 0 || flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0:
		return fmt.Errorf("template message with descriptors, or over %d bytes", maxTemplateMessage)
	}
	if err := json.Unmarshal(buf[:n], v); err != nil {
		return fmt.Errorf("template message %.80q: %w", buf[:n], err)
	}
	return nil
}

// closeRights closes the descriptors of SCM_RIGHTS messages in oob.
func closeRights(oob []byte) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return
	}
	for _, m := range msgs {
		if fds, err := unix.ParseUnixRights(&m); err == nil {
			for _, fd := range fds {
				unix.Close(fd)
			}
		}
	}
}

// deadlineOn makes ctx's end interrupt the fork socket; the returned
// function undoes that.
//
// Once the returned function has returned, no deadline of ctx's is set
// any more, nor left set: context.AfterFunc's own stop cannot say that of
// a function that has started, so the two meet under a lock, and an
// exchange that ended before ctx's end set its deadline gets it cleared.
func (tp *Template) deadlineOn(ctx context.Context) func() {
	var mu sync.Mutex
	active, set := true, false
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if active {
			tp.conn.SetDeadline(time.Unix(1, 0))
			set = true
		}
	})
	return func() {
		stop()
		mu.Lock()
		defer mu.Unlock()
		active = false
		if set {
			tp.conn.SetDeadline(time.Time{})
		}
	}
}

// ctxErr returns ctx's error when it caused err (a deadline in the past).
func (tp *Template) ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// runFiles are the descriptors of one fork: the run's output pipes, its
// init's control socket and its go pipe. Fields set to nil are owned
// elsewhere.
type runFiles struct {
	outR, outW, errR, errW *os.File
	ctl, initCtl           *os.File
	goR, goW               *os.File
}

func newRunFiles() (*runFiles, error) {
	rf := &runFiles{}
	var err error
	if rf.outR, rf.outW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	if rf.errR, rf.errW, err = os.Pipe(); err == nil {
		if rf.goR, rf.goW, err = os.Pipe(); err == nil {
			rf.ctl, rf.initCtl, err = controlSocket()
		}
	}
	if err != nil {
		rf.close()
		return nil, fmt.Errorf("run descriptors: %w", err)
	}
	return rf, nil
}

// unsentError is a Fork's end before its request went to the template,
// which then is as it was.
type unsentError struct{ err error }

func (e *unsentError) Error() string { return e.err.Error() }
func (e *unsentError) Unwrap() error { return e.err }

// withRunStderr adds to the error of a fork whose request went to the
// template, and was not refused, what the run's processes wrote to its
// stderr: why they gave up, in their own words, wherever the host's checks
// found out (a run init that ended before the host looked is "no child of
// its init", not "did not start").
func withRunStderr(err error, rf *runFiles) error {
	if !brokenExchange(err) || errors.Is(err, ErrTemplateGone) {
		return err
	}
	if said := rf.stderrSoFar(); said != "" {
		return fmt.Errorf("%w; the run's processes wrote: %q", err, cutText(said, 1000))
	}
	return err
}

// stderrGlance is how long a failed fork waits for what the run's
// processes wrote to its stderr.
const stderrGlance = 50 * time.Millisecond

// stderrSoFar returns what the run's processes have written to its
// stderr, one read of at most 4 KiB, waiting stderrGlance at most: why a
// run that could not be adopted did not start, in its own words (the
// template's processes of the run and the run's init write there before
// they give up). For an error message only: it is the template's word.
func (rf *runFiles) stderrSoFar() string {
	if rf.errR == nil || rf.errR.SetReadDeadline(time.Now().Add(stderrGlance)) != nil {
		return ""
	}
	buf := make([]byte, 4096)
	n, _ := rf.errR.Read(buf)
	return strings.TrimSpace(string(buf[:n]))
}

// closeTheirs closes our copies of the run's ends.
func (rf *runFiles) closeTheirs() {
	for _, f := range []**os.File{&rf.outW, &rf.errW, &rf.initCtl, &rf.goR} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
}

// close closes every descriptor still ours.
func (rf *runFiles) close() {
	rf.closeTheirs()
	for _, f := range []**os.File{&rf.outR, &rf.errR, &rf.ctl, &rf.goW} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
}

// cutText cuts hostile text for an error message.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
