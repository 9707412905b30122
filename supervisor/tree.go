package supervisor

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

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
)

// tree is the supervisor's view of one process tree. After Start, all of it
// except the channels is owned by the supervise goroutine.
type tree struct {
	host     *Host
	spec     Spec
	marker   string // the EnvMarker value: host pid, host start time, tree id
	proc     *Process
	rootExit chan *os.ProcessState

	r        *procfs.Reader
	members  map[int]*member
	gen      uint64 // number of the current walk
	queue    []pending
	kids     []int
	scan     []int
	orphans  []int
	tids     []int // scratch for Host.ownChildren
	lastFull time.Time
	// unpinned counts processes of the last walk that could not be pinned
	// (out of fds): they are counted, and killed by pid.
	unpinned int

	peakMem   int64
	peakProcs int
	violation *Violation
	killed    bool
	rootState *os.ProcessState
	state     *stateWriter
	resetters sync.WaitGroup // peak resets in flight
}

// member is one process the tree tracks, pinned by its /proc fds.
type member struct {
	proc    *procfs.Proc
	root    bool
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

func (h *Host) newTree(spec Spec) *tree {
	h.mu.Lock()
	h.nextID++
	id := h.nextID
	h.mu.Unlock()
	t := &tree{
		host:     h,
		spec:     spec,
		marker:   fmt.Sprintf("%d.%d.%d", h.pid, h.start, id),
		rootExit: make(chan *os.ProcessState, 1),
		r:        procfs.NewReader(),
		members:  map[int]*member{},
	}
	t.proc = &Process{
		marker:  t.marker,
		samples: make(chan Sample, 1),
		done:    make(chan struct{}),
		gone:    make(chan struct{}),
		killReq: make(chan struct{}),
		capture: newCapture(spec.Output, spec.Limits.OutputBytes, spec.Limits.LineBytes),
	}
	if spec.StateFile != "" {
		t.state = &stateWriter{path: spec.StateFile, owner: procID{h.pid, h.start}, marker: t.marker, dirty: true}
	}
	return t
}

// addRoot pins the root. It runs with h.mu held, before os/exec can reap it.
func (t *tree) addRoot(pid int) error {
	p, err := t.r.Open(pid)
	if err != nil {
		return fmt.Errorf("pin root %d: %w", pid, err)
	}
	t.proc.pid = pid
	t.members[pid] = &member{proc: p, root: true, live: true, pidfd: -1}
	t.host.claimed[pid] = claim{p.Stat.StartTime, t}
	return nil
}

// supervise samples the tree until a violation, Kill or the root's exit, then
// kills what is left and ends the Process.
func (t *tree) supervise() {
	p := t.proc
	ticker := time.NewTicker(t.spec.SampleInterval)
	t.sample(time.Now(), true)
loop:
	for t.violation == nil {
		select {
		case now := <-ticker.C:
			t.sample(now, now.Sub(t.lastFull) >= fullScanEvery)
		case <-p.killReq:
			t.killed = true
			break loop
		case t.rootState = <-t.rootExit:
			break loop
		}
	}
	ticker.Stop()
	killStart := time.Now()
	t.kill()
	p.killTook = time.Since(killStart)
	t.resetters.Wait() // a reset blocked behind a process's mmap lock returns once it is dead
	t.host.forget(t)
	if t.state != nil {
		if err := t.state.remove(); err != nil {
			p.capture.notice("supervisor: " + err.Error())
		}
	}
	close(p.gone)
	p.capture.drain(drainTimeout)
	close(p.samples)
	p.result = t.result()
	close(p.done)
}

// sample takes one view of the tree, publishes it and enforces the limits.
// full adds a scan of all of /proc.
func (t *tree) sample(now time.Time, full bool) {
	t.walk(full, true)
	s := Sample{Time: now, Processes: t.unpinned, MemoryBytes: t.memory(), Procs: make([]Proc, 0, len(t.members))}
	for pid, m := range t.members {
		if !m.live {
			continue
		}
		s.Processes++
		s.Procs = append(s.Procs, Proc{PID: pid, PPID: m.status.PPID, RSSBytes: m.status.RSS, Command: t.command(m)})
	}
	slices.SortFunc(s.Procs, func(a, b Proc) int { return a.PID - b.PID })
	t.peakMem = max(t.peakMem, s.MemoryBytes)
	t.peakProcs = max(t.peakProcs, s.Processes)
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
	l := t.spec.Limits
	switch {
	case l.MemoryBytes > 0 && s.MemoryBytes > l.MemoryBytes:
		t.violation = &Violation{Kind: ViolationMemory, Limit: l.MemoryBytes, Value: s.MemoryBytes, Time: now,
			Message: fmt.Sprintf("process tree used %s resident memory, over the %s limit", formatBytes(s.MemoryBytes), formatBytes(l.MemoryBytes))}
	case l.Processes > 0 && s.Processes > l.Processes:
		t.violation = &Violation{Kind: ViolationProcesses, Limit: int64(l.Processes), Value: int64(s.Processes), Time: now,
			Message: fmt.Sprintf("process tree had %d processes, over the %d-process limit", s.Processes, l.Processes)}
	}
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
// /proc) and orphans the Host attributes to this tree. It drops members that
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
		t.orphans = append(t.orphans[:0], byParent[t.host.pid]...)
		t.lastFull = time.Now()
	} else {
		t.orphans, t.tids = t.host.ownChildren(t.r, t.orphans[:0], t.tids)
	}
	q = t.host.adoptOrphans(t, t.r, q, t.orphans)
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
		if sampling {
			t.resetPeak(m)
		}
		t.kids, _ = m.proc.Children(t.r, st.Threads, t.kids[:0])
		for _, kid := range append(t.kids, byParent[pd.pid]...) {
			if t.members[kid] == nil {
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

// kill stops and kills every process of the tree until a scan finds none,
// and waits for the root to be reaped. After killPatience it stops waiting
// for processes other than the root (a process in uninterruptible sleep
// dies only when it wakes up) and says so in a System line.
func (t *tree) kill() {
	pause := time.Millisecond
	giveUp := time.Now().Add(killPatience)
	for round := 0; ; round++ {
		t.walk(true, false)
		// Stop first, so that nothing forks between the scan and the kill;
		// rescan until no new process appears (children files are reliable
		// for stopped processes).
		for t.signal(unix.SIGSTOP) > 0 {
			if round == 0 {
				// The overshoot past a limit since the last sample.
				t.peakMem = max(t.peakMem, t.memory())
			}
			t.walk(false, false)
		}
		if len(t.members) == 0 {
			break
		}
		if time.Now().After(giveUp) && !t.hasRoot() {
			t.abandon()
			break
		}
		t.signal(unix.SIGKILL)
		time.Sleep(pause)
		pause = min(2*pause, killBackoffMax)
	}
	if t.rootState == nil {
		t.rootState = <-t.rootExit
	}
}

func (t *tree) hasRoot() bool {
	for _, m := range t.members {
		if m.root {
			return true
		}
	}
	return false
}

// abandon forgets the members that outlived killPatience, with a notice.
func (t *tree) abandon() {
	var pids []int
	for pid, m := range t.members {
		pids = append(pids, pid)
		t.drop(pid, m)
	}
	slices.Sort(pids)
	t.proc.capture.notice(fmt.Sprintf("supervisor: processes %v of the tree were sent SIGKILL but had not ended after %v", pids, killPatience))
}

// memory sums the peaks of the live members seen by the last walk.
func (t *tree) memory() int64 {
	var sum int64
	for _, m := range t.members {
		if m.live {
			sum += m.peak
		}
	}
	return sum
}

// signal sends sig to every live member (SIGSTOP only to those not stopped
// yet) and returns how many it signalled. It signals through a pidfd opened
// while the member's pinned /proc fds show it alive, so a reused pid is never
// hit.
func (t *tree) signal(sig unix.Signal) int {
	n := 0
	for pid, m := range t.members {
		if !m.live || sig == unix.SIGSTOP && m.stopped {
			continue
		}
		if m.pidfd < 0 {
			fd, err := unix.PidfdOpen(pid, 0)
			if err == nil {
				if !m.proc.Alive(t.r) {
					unix.Close(fd)
					continue
				}
				m.pidfd = fd
			}
		}
		if m.pidfd >= 0 {
			unix.PidfdSendSignal(m.pidfd, sig, nil, 0)
		} else if m.proc.Alive(t.r) {
			unix.Kill(pid, sig) // no pidfds (Linux < 5.3, or out of fds)
		}
		m.stopped = m.stopped || sig == unix.SIGSTOP
		n++
	}
	return n
}

func (t *tree) result() Result {
	res := Result{
		Violation:       t.violation,
		Killed:          t.killed,
		PeakMemoryBytes: t.peakMem,
		PeakProcesses:   t.peakProcs,
	}
	res.OutputBytes, res.OutputTruncated = t.proc.capture.totals()
	st := t.rootState
	res.ExitCode = st.ExitCode()
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal()
	}
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		t.proc.rootRusage = ru
	}
	return res
}

// formatBytes formats n for users: "2.31 GiB", "212.4 MiB".
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
