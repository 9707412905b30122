// This file is long because it is one owner's state: the tree goroutine
// owns the members, the pending adoptions and the samples, and every method
// here runs on it; splitting them apart would hide which goroutine may touch
// what.

package supervisor

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/internal/units"
	"stratbench/supervisor/internal/procfs"
)

const (
	// fullScanEvery is how often a sample also scans all of /proc: the
	// children files can miss tasks that fork or exit while they are read.
	fullScanEvery = time.Second
	// killBackoffMax caps the pause between two kill rounds.
	killBackoffMax = 20 * time.Millisecond
	// killPatience is how long a kill waits for processes other than the
	// root to end.
	killPatience = 10 * time.Second
	// drainTimeout bounds reading the output pipes after the tree is gone;
	// only a process outside the tree that holds a pipe can make it matter.
	drainTimeout = time.Second
	// maxInitMessage bounds one message of the init.
	maxInitMessage = 64 << 10
)

// tree is the supervisor's view of one process tree. After Start, all of it
// except the channels is owned by the supervise goroutine.
type tree struct {
	host     *Host
	spec     Spec
	marker   string // the EnvMarker value: host pid, host start time, tree id
	tracking TreeTracking
	proc     *Process
	rootPID  int                   // the init's
	rootExit chan *os.ProcessState // the init's end

	ctl       *os.File // our end of the control socket
	ctlR      *bufio.Reader
	childExit chan unix.WaitStatus // the program's wait status, from the init
	ctlDone   chan struct{}        // closed when the init's messages end
	mounts    []privateMount       // the private tmpfs mounts the host counts
	devShm    bool                 // one of them is the private /dev/shm
	fsize     int64                // the limit of SetFileSizeLimit, -1 before
	fsizeFail bool                 // a process could not be limited; said once

	r        *procfs.Reader
	members  map[int]*member
	gen      uint64 // number of the current walk
	queue    []pending
	kids     []int
	scan     []int
	orphans  []int
	lastFull time.Time
	// unpinned counts processes of the last walk that could not be pinned
	// (out of fds): they are counted, and killed by pid.
	unpinned int

	peakMem     int64
	peakProcs   int
	peakTasks   int
	taskCeiling int // see Result.TaskCeiling
	violation   *Violation
	killed      bool
	rootState   *os.ProcessState
	childStatus *unix.WaitStatus
	state       *stateWriter
	resetters   sync.WaitGroup // peak resets in flight

	// For a run forked from a template (see Template.Fork): template is
	// the template, and the root is the run's init, whose memory counts
	// (the template can reach into it) and whose end comes from its
	// pidfd (see watchRoot), not from os/exec.
	template  *Template
	countRoot bool
	// For a template's own tree: the roots of the runs forked from it, by
	// pid, with their start time. They and everything in their PID
	// namespaces are not part of this tree. exclude brings new ones to the
	// supervise goroutine; nil for other trees.
	runs    map[int]uint64
	exclude chan excludeRequest
}

// excludeRequest asks a template's tree to leave a run's root, and its
// descendants, to the run's own tree.
type excludeRequest struct {
	pid   int
	start uint64
	done  chan error
}

// member is one process the tree tracks, pinned by its /proc fds.
type member struct {
	proc    *procfs.Proc
	root    bool   // the init: part of the tree, but not counted in it
	gen     uint64 // the walk that last visited it
	status  procfs.Status
	live    bool // not a zombie at the last visit
	stopped bool // SIGSTOP sent
	pidfd   int  // opened at the first signal, -1 before
	cmdline string
	cmdName string // status Name when cmdline was read: a change means an exec

	// peak is the largest RSS the process is known to have had since the
	// previous visit (see notePeak).
	peak       int64
	peakSeen   int64  // VmHWM at the previous visit
	resetsSeen uint64 // resets.Load() at the previous visit
	resets     atomic.Uint64
	resetting  atomic.Bool // a peak reset is in flight
}

// notePeak sets m.peak from a fresh status. resetsDone is m.resets as loaded
// before the status was read. When a reset of VmHWM completed since the
// previous visit, VmHWM is the peak since then. Otherwise (the reset is still
// blocked, see procfs.ResetPeak) VmHWM is an older peak: it says something
// about the time since the previous visit only if it grew.
func (m *member) notePeak(st procfs.Status, resetsDone uint64) {
	if resetsDone != m.resetsSeen || st.Peak > m.peakSeen {
		m.peak = max(st.Peak, st.RSS)
	} else {
		m.peak = st.RSS
	}
	m.peakSeen, m.resetsSeen = st.Peak, resetsDone
}

// pending is a process to visit: a known member, a child of parent, or (with
// parent 0) an orphan the Host attributed to this tree, identified by start.
type pending struct {
	pid, parent int
	start       uint64
}

func (h *Host) newTree(spec Spec, ctl *os.File) *tree {
	h.mu.Lock()
	h.nextID++
	id := h.nextID
	h.mu.Unlock()
	t := &tree{
		host:      h,
		spec:      spec,
		marker:    fmt.Sprintf("%d.%d.%d", h.pid, h.start, id),
		rootExit:  make(chan *os.ProcessState, 1),
		ctl:       ctl,
		ctlR:      bufio.NewReaderSize(ctl, maxInitMessage),
		childExit: make(chan unix.WaitStatus, 1),
		ctlDone:   make(chan struct{}),
		fsize:     -1,
		r:         procfs.NewReader(),
		members:   map[int]*member{},
	}
	t.proc = &Process{
		marker:   t.marker,
		samples:  make(chan Sample, 1),
		done:     make(chan struct{}),
		gone:     make(chan struct{}),
		ending:   make(chan struct{}),
		killReq:  make(chan struct{}),
		fsizeReq: make(chan fsizeRequest),
		checkReq: make(chan chan struct{}),
		capture:  newCapture(spec.Output, spec.Limits.OutputBytes, spec.Limits.LineBytes),
	}
	if spec.StateFile != "" {
		t.state = &stateWriter{path: spec.StateFile, owner: ProcID{h.pid, h.start}, marker: t.marker, dirty: true}
	}
	return t
}

// addRoot pins the init. It runs with h.mu held, before os/exec can reap it.
func (t *tree) addRoot(pid int) error {
	p, err := t.r.Open(pid)
	if err != nil {
		return fmt.Errorf("pin the init %d: %w", pid, err)
	}
	t.rootPID = pid
	t.proc.initPID = pid
	t.members[pid] = &member{proc: p, root: true, live: true, pidfd: -1}
	t.host.claimed[pid] = claim{p.Stat.StartTime, t}
	return nil
}

// supervise samples the tree until a violation, Kill, or the end of the
// program (or of the init), then kills what is left and ends the Process.
func (t *tree) supervise() {
	p := t.proc
	ticker := time.NewTicker(t.spec.SampleInterval)
	// The first sample scans all of /proc only for the fallback tracking,
	// where the init's orphans may already have reached stratbench. In a
	// PID namespace every process of the tree descends from its init, which
	// has just started: the walk finds them all, and the full scans, the
	// backstop for a children file read while tasks fork or exit, begin
	// fullScanEvery from now. (A full scan reads every process's stat: 2 ms
	// with 150 processes, more on a desktop, at each run's start.)
	start := time.Now()
	if t.tracking != TrackingFallback {
		t.lastFull = start
	}
	t.sample(start, t.tracking == TrackingFallback)
loop:
	for t.violation == nil {
		select {
		case now := <-ticker.C:
			t.sample(now, now.Sub(t.lastFull) >= fullScanEvery)
		case <-p.killReq:
			t.killed = true
			break loop
		case ws := <-t.childExit:
			t.childStatus = &ws
			break loop
		case <-t.ctlDone:
			break loop // the init is gone, or broken: the tree ends either way
		case t.rootState = <-t.rootExit:
			break loop
		case done := <-p.checkReq:
			t.sample(time.Now(), false)
			close(done)
		case req := <-p.fsizeReq:
			req.done <- t.setFileSize(req.bytes)
		case req := <-t.exclude:
			req.done <- t.excludeRun(req.pid, req.start)
		}
	}
	ticker.Stop()
	close(p.ending)
	killStart := time.Now()
	t.kill()
	p.killTook = time.Since(killStart)
	t.resetters.Wait() // a reset blocked behind a process's mmap lock returns once it is dead
	t.host.forget(t)
	// The init is reaped, so its end of the control socket is closed:
	// the last message, if any, is in.
	select {
	case <-t.ctlDone:
	case <-time.After(drainTimeout):
	}
	if t.childStatus == nil {
		select {
		case ws := <-t.childExit:
			t.childStatus = &ws
		default:
		}
	}
	t.copyOut()
	t.closeFDs()
	if t.state != nil {
		if err := t.state.remove(); err != nil {
			p.capture.notice("supervisor: " + err.Error())
		}
	}
	code, sig, lost := t.exitStatus()
	templateLost := lost && t.template != nil && t.template.endsWithin(drainTimeout)
	switch {
	case templateLost:
		p.capture.notice("supervisor: the template this run was forked from ended, and the run was killed with it")
	case lost:
		p.capture.notice("supervisor: the tree's init ended before it reported how the program ended; the program was killed with it")
	}
	close(p.gone)
	p.capture.drain(drainTimeout)
	close(p.samples)
	p.result = t.result(code, sig, lost)
	p.result.TemplateLost = templateLost
	close(p.done)
}

// closeFDs closes the control socket and the private mounts: an open fd of
// a tmpfs keeps its pages in memory after the namespace is gone.
func (t *tree) closeFDs() {
	t.ctl.Close()
	t.closeMounts()
}

// abort kills a tree whose start failed after its init ran.
func (t *tree) abort() {
	t.killed = true
	t.kill()
	t.resetters.Wait()
	t.host.forget(t)
}

// sample takes one view of the tree, publishes it and enforces the limits.
// full adds a scan of all of /proc.
func (t *tree) sample(now time.Time, full bool) {
	t.walk(full, true)
	tmp := t.mountBytes()
	s := Sample{Time: now, TmpBytes: tmp, MemoryBytes: t.memory() + tmp,
		Procs: make([]Proc, 0, len(t.members)), TreeTracking: t.tracking}
	s.Processes, s.Tasks = t.count()
	for pid, m := range t.members {
		if m.live && !m.root {
			s.Procs = append(s.Procs, Proc{PID: pid, PPID: m.status.PPID, RSSBytes: m.status.RSS, Command: t.command(m)})
		}
	}
	slices.SortFunc(s.Procs, func(a, b Proc) int { return a.PID - b.PID })
	t.peakMem = max(t.peakMem, s.MemoryBytes)
	t.peakProcs = max(t.peakProcs, s.Processes)
	t.peakTasks = max(t.peakTasks, s.Tasks)
	select { // replace an unread sample; this goroutine is the only sender
	case <-t.proc.samples:
	default:
	}
	t.proc.samples <- s
	if t.state != nil {
		if err := t.state.update(now, t.members); err != nil {
			t.proc.capture.notice("supervisor: " + err.Error() + "; if stratbench is killed, processes of this run may survive it")
		}
	}
	t.violation = t.breach(s)
}

// breach returns the limit s shows broken, nil if none.
func (t *tree) breach(s Sample) *Violation {
	l := t.spec.Limits
	switch {
	case l.MemoryBytes > 0 && s.MemoryBytes > l.MemoryBytes:
		// In bytes, and by how much: "2.00 GiB, over the 2.00 GiB limit"
		// read as no excess at all.
		what := "resident memory"
		if files := t.mountUsage(); files != "" {
			what = fmt.Sprintf("memory (resident, and %s)", files)
		}
		return &Violation{Kind: ViolationMemory, Limit: l.MemoryBytes, Value: s.MemoryBytes, Time: s.Time,
			Message: fmt.Sprintf("process tree used %s bytes of %s, %s over the %s limit (%s bytes)", units.Count(s.MemoryBytes), what,
				units.Bytes(s.MemoryBytes-l.MemoryBytes), units.Bytes(l.MemoryBytes), units.Count(l.MemoryBytes))}
	case l.Processes > 0 && s.Processes > l.Processes:
		return &Violation{Kind: ViolationProcesses, Limit: int64(l.Processes), Value: int64(s.Processes), Time: s.Time,
			Message: fmt.Sprintf("process tree had %d processes, over the %d-process limit", s.Processes, l.Processes)}
	case l.Tasks > 0 && s.Tasks > l.Tasks:
		return &Violation{Kind: ViolationProcesses, Limit: int64(l.Tasks), Value: int64(s.Tasks), Time: s.Time,
			Message: fmt.Sprintf("process tree had %s tasks (threads included) in %s, over the %s-task limit",
				units.Count(s.Tasks), processes(s.Processes), units.Count(l.Tasks))}
	}
	return nil
}

// processes says n processes in words: "1 process", "3 processes".
func processes(n int) string {
	if n == 1 {
		return "1 process"
	}
	return units.Count(n) + " processes"
}

// count returns the live processes of the tree but the init, as the last
// walk saw them, and their tasks: each process's threads (a process the
// walk could not pin counts as one of each).
func (t *tree) count() (procs, tasks int) {
	procs, tasks = t.unpinned, t.unpinned
	for _, m := range t.members {
		if m.live && !m.root {
			procs++
			tasks += max(m.status.Threads, 1)
		}
	}
	return procs, tasks
}

// setFileSize applies a file size limit to every live member, and
// remembers it for the members found later.
func (t *tree) setFileSize(n int64) error {
	t.fsize = n
	var errs []error
	for pid, m := range t.members {
		if m.live {
			if err := t.limitFileSize(pid, m); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("supervisor: set file size limit: %w", errors.Join(errs...))
	}
	return nil
}

// limitFileSize sets RLIMIT_FSIZE on a member. There is no pidfd form of
// prlimit: the pinned member is checked first, which leaves the pid only the
// instant between the check and the call to be reused in.
func (t *tree) limitFileSize(pid int, m *member) error {
	if !m.proc.Alive(t.r) {
		return nil
	}
	lim := unix.Rlimit{Cur: uint64(t.fsize), Max: uint64(t.fsize)}
	if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &lim, nil); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("process %d: %w", pid, err)
	}
	return nil
}

// command returns m's command line, read when m is first seen and again after
// it exec'd (its name changed).
func (t *tree) command(m *member) string {
	if m.cmdline == "" || m.cmdName != m.status.Name {
		if c, err := m.proc.Cmdline(t.r); err == nil {
			m.cmdline, m.cmdName = c, m.status.Name
		}
	}
	return m.cmdline
}

// walk visits every member and discovers new ones: children of members
// (from their threads' children files and, with full, from a scan of all of
// /proc) and, in the fallback, orphans the Host attributes to this tree. It drops members that
// are gone and reaps adopted orphans that exited. With sampling it resets
// each process's peak after reading it.
func (t *tree) walk(full, sampling bool) {
	t.gen++
	t.unpinned = 0
	q := t.queue[:0]
	for pid := range t.members {
		q = append(q, pending{pid: pid})
	}
	var byParent map[int][]int
	if full {
		byParent = t.scanAll()
		t.lastFull = time.Now()
	}
	if t.tracking == TrackingFallback {
		// Orphans reach stratbench only if the init was killed.
		if full {
			t.orphans = append(t.orphans[:0], byParent[t.host.pid]...)
		} else {
			t.orphans = t.host.ownChildren(t.r, t.orphans[:0])
		}
		q = t.host.adoptOrphans(t, t.r, q, t.orphans)
	}
	for i := 0; i < len(q); i++ {
		pd := q[i]
		m := t.members[pd.pid]
		if m == nil {
			if m = t.adopt(pd, sampling); m == nil {
				continue
			}
		}
		if m.gen == t.gen {
			continue
		}
		m.gen = t.gen
		resetsDone := m.resets.Load()
		st, err := m.proc.Status(t.r)
		if err != nil {
			if procfs.Gone(err) {
				t.drop(pd.pid, m)
			}
			continue // otherwise keep what the last visit saw
		}
		m.status = st
		m.live = !st.Zombie()
		if !m.live {
			if st.PPID == t.host.pid && !m.root {
				t.reap(pd.pid, m)
			}
			continue
		}
		m.notePeak(st, resetsDone)
		if sampling && !m.root {
			t.resetPeak(m)
		}
		threads := st.Threads
		if m.root {
			// The init forks from its main thread, which lives as long
			// as it does, and the kernel reparents orphans to the first
			// live thread of a reaper, that one: its children are all in
			// the main thread's list, whatever threads the Go runtime
			// runs beside it. (The full scans would see any other.)
			threads = 1
		}
		t.kids, _ = m.proc.Children(t.r, threads, t.kids[:0])
		for _, kid := range append(t.kids, byParent[pd.pid]...) {
			if t.members[kid] == nil && !t.isRun(kid) {
				q = append(q, pending{pid: kid, parent: pd.pid})
			}
		}
	}
	t.queue = q
}

// resetPeak resets m's VmHWM, so that the next visit sees the peak since
// now. The reset runs on its own goroutine: it waits for the process's mmap
// lock, which a MAP_POPULATE of gigabytes holds for seconds, and the sampler
// must keep sampling meanwhile. At most one reset per process is in flight.
func (t *tree) resetPeak(m *member) {
	if m.resetting.Swap(true) {
		return
	}
	fd, err := m.proc.DupClearRefs()
	if err != nil || fd < 0 {
		m.resetting.Store(false)
		return
	}
	t.resetters.Add(1)
	go func() {
		defer t.resetters.Done()
		procfs.ResetPeak(fd)
		unix.Close(fd)
		m.resets.Add(1)
		m.resetting.Store(false)
	}()
}

// scanAll reads the parent of every process that is not a member and
// returns the processes by parent.
func (t *tree) scanAll() map[int][]int {
	t.scan, _ = t.r.PIDs(t.scan[:0])
	byParent := map[int][]int{}
	for _, pid := range t.scan {
		if t.members[pid] != nil {
			continue
		}
		if st, err := t.r.Stat(pid); err == nil {
			byParent[st.PPID] = append(byParent[st.PPID], pid)
		}
	}
	return byParent
}

// adopt pins a newly found process and makes it a member, after checking
// that it is the process that was found: still a child of the member that
// listed it (or reparented to us since), or the orphan with the start time
// the Host saw. A process that cannot be pinned (out of fds) is counted;
// while killing, it is killed by pid if its parent is stopped or is us:
// then nothing can reap it and free its pid meanwhile.
func (t *tree) adopt(pd pending, sampling bool) *member {
	p, err := t.r.Open(pd.pid)
	if err != nil {
		if !procfs.Gone(err) {
			t.unpinned++
			if parent := t.members[pd.parent]; !sampling && (pd.parent == 0 || parent != nil && parent.stopped) {
				unix.Kill(pd.pid, unix.SIGKILL)
			}
		}
		if pd.parent == 0 {
			t.host.release(pd.pid, t)
		}
		return nil
	}
	var ok bool
	if pd.parent == 0 {
		ok = p.Stat.StartTime == pd.start
	} else {
		ok = p.Stat.PPID == pd.parent || p.Stat.PPID == t.host.pid
		if ok {
			t.host.claim(pd.pid, p.Stat.StartTime, t)
		}
	}
	if !ok {
		p.Close()
		if pd.parent == 0 {
			t.host.release(pd.pid, t)
		}
		return nil
	}
	m := &member{proc: p, pidfd: -1}
	t.members[pd.pid] = m
	if t.state != nil {
		t.state.dirty = true
	}
	if t.fsize >= 0 {
		if err := t.limitFileSize(pd.pid, m); err != nil && !t.fsizeFail {
			t.fsizeFail = true
			t.proc.capture.notice("supervisor: a new process of the tree escapes the file size limit: " + err.Error())
		}
	}
	return m
}

// drop forgets a member that is gone.
func (t *tree) drop(pid int, m *member) {
	m.proc.Close()
	if m.pidfd >= 0 {
		unix.Close(m.pidfd)
	}
	delete(t.members, pid)
	t.host.release(pid, t)
	if t.state != nil {
		t.state.dirty = true
	}
}

// reap collects an adopted orphan that exited. Only its pid is waited for:
// wait(-1) would steal the exit status of children os/exec waits for.
func (t *tree) reap(pid int, m *member) {
	var ws unix.WaitStatus
	if got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); got == pid || err == unix.ECHILD {
		t.drop(pid, m)
	}
}

// memory sums the peaks of the live members but the init seen by the last
// walk.
func (t *tree) memory() int64 {
	var sum int64
	for _, m := range t.members {
		if m.live && (!m.root || t.countRoot) {
			sum += m.peak
		}
	}
	return sum
}

// isRun reports whether pid is the root of a run forked from this tree (a
// template) and still the process it was: the start time tells a reused
// pid. An entry whose process is gone is forgotten.
func (t *tree) isRun(pid int) bool {
	start, ok := t.runs[pid]
	if !ok {
		return false
	}
	if st, err := t.r.Stat(pid); err == nil && st.StartTime == start {
		return true
	}
	delete(t.runs, pid)
	return false
}

// excludeRun makes the process pid (with start time start) the root of a
// run: from now on it and its descendants are not part of this tree, and
// the members this tree already took from among them are dropped. Every
// process of the run's PID namespace descends from its root and none can
// leave it, so the descendants are found from the members' parents, read
// afresh.
func (t *tree) excludeRun(pid int, start uint64) error {
	if _, ok := t.runs[pid]; ok && t.isRun(pid) {
		return fmt.Errorf("process %d is already the root of a run", pid)
	}
	if t.runs == nil {
		t.runs = map[int]uint64{}
	}
	t.runs[pid] = start
	parent := make(map[int]int, len(t.members))
	for p, m := range t.members {
		if st, err := m.proc.Status(t.r); err == nil {
			m.status = st
		}
		parent[p] = m.status.PPID
	}
	inRun := map[int]bool{pid: true}
	for grew := true; grew; {
		grew = false
		for p, pp := range parent {
			if !inRun[p] && inRun[pp] {
				inRun[p], grew = true, true
			}
		}
	}
	for p := range inRun {
		if m := t.members[p]; m != nil && !m.root {
			t.drop(p, m)
		}
	}
	return nil
}
