package supervisor

import (
	"fmt"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// How a tree ends: killed (its init, then, in the fallback, every member
// until none is left), and the result it reports.

// kill kills every process of the tree and reaps the init.
//
// In a PID namespace, killing the init is enough: when the init of a
// namespace dies, the kernel (zap_pid_ns_processes) sends SIGKILL to every
// other process of the namespace, nested namespaces included, and the
// init's exit completes only once they are all reaped, so the init is
// reaped last. Nothing of the tree can outlive that wait, and nothing can
// fork meanwhile (the namespace no longer allocates pids).
//
// In the fallback the init stays alive while everything below it is stopped
// and killed, so that orphans keep landing on it rather than on stratbench;
// it goes last.
func (t *tree) kill() {
	if t.tracking == TrackingPIDNamespace && t.rootState == nil {
		// The overshoot past a limit since the last sample.
		t.walk(false, false)
		t.notePeaks()
		t.killRoot()
		// Every member's pinned fds now say it is gone; the loop
		// below is for what cannot happen.
		if t.walk(false, false); len(t.members) == 0 {
			return
		}
	}
	t.killMembers()
	if t.rootState == nil {
		t.killRoot()
		// Nothing was left below the init, and it starts nothing: its
		// death hands nothing to stratbench unless something escaped
		// the scans, which a walk of stratbench's children finds.
		if t.walk(false, false); len(t.members) > 0 {
			t.killMembers()
		}
	}
}

// notePeaks takes the tree as the last walk saw it, as it is stopped, into
// the peaks. A count limit (processes, tasks) that it breaks and that no
// sample saw broken (the tree passed it after the last sample, or a sample
// took longer than the tree had left) is a violation all the same: the
// tree had those tasks, and a run that ended on its own would otherwise
// pass with a peak over its limit. (Memory is left to the samples, as
// before: a process's peak since the last sample is what they count.)
func (t *tree) notePeaks() {
	t.peakMem = max(t.peakMem, t.memory()+t.mountBytes())
	procs, tasks := t.count()
	t.peakProcs, t.peakTasks = max(t.peakProcs, procs), max(t.peakTasks, tasks)
	if t.violation == nil {
		if v := t.breach(Sample{Time: time.Now(), Processes: procs, Tasks: tasks}); v != nil {
			v.Message += " (seen as the tree was stopped)"
			t.violation = v
		}
	}
}

// killRoot kills the init and waits until it is reaped.
func (t *tree) killRoot() {
	if m := t.members[t.rootPID]; m != nil {
		t.signalMember(t.rootPID, m, unix.SIGKILL)
	} // else its pinned fds said it was reaped already: rootExit is sent or coming
	t.rootState = <-t.rootExit
}

// killMembers stops and kills every process of the tree but the init until
// a scan finds none. After killPatience it stops waiting (a process in
// uninterruptible sleep dies only when it wakes up) and says so in a System
// line.
func (t *tree) killMembers() {
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
				t.notePeaks()
			}
			t.walk(false, false)
		}
		if len(t.members) == 0 || len(t.members) == 1 && t.members[t.rootPID] != nil {
			return
		}
		if time.Now().After(giveUp) {
			t.abandon()
			return
		}
		t.signal(unix.SIGKILL)
		// A stopped init would not reap what it must reap.
		if m := t.members[t.rootPID]; m != nil && m.live {
			t.signalMember(t.rootPID, m, unix.SIGCONT)
		}
		time.Sleep(pause)
		pause = min(2*pause, killBackoffMax)
	}
}

// abandon forgets the members but the init that outlived killPatience, with
// a notice.
func (t *tree) abandon() {
	var pids []int
	for pid, m := range t.members {
		if !m.root {
			pids = append(pids, pid)
			t.drop(pid, m)
		}
	}
	slices.Sort(pids)
	t.proc.capture.notice(fmt.Sprintf("supervisor: processes %v of the tree were sent SIGKILL but had not ended after %v", pids, killPatience))
}

// signal sends sig to every live member but the init (SIGSTOP only to those
// not stopped yet) and returns how many it signalled.
func (t *tree) signal(sig unix.Signal) int {
	n := 0
	for pid, m := range t.members {
		if !m.live || m.root || sig == unix.SIGSTOP && m.stopped {
			continue
		}
		if t.signalMember(pid, m, sig) {
			m.stopped = m.stopped || sig == unix.SIGSTOP
			n++
		}
	}
	return n
}

// signalMember sends sig to m through a pidfd opened while m's pinned /proc
// fds show it alive, so that a reused pid is never hit. It reports false
// when m is gone.
func (t *tree) signalMember(pid int, m *member, sig unix.Signal) bool {
	if m.pidfd < 0 {
		fd, err := unix.PidfdOpen(pid, 0)
		if err == nil {
			if !m.proc.Alive(t.r) {
				unix.Close(fd)
				return false
			}
			m.pidfd = fd
		}
	}
	if m.pidfd >= 0 {
		unix.PidfdSendSignal(m.pidfd, sig, nil, 0)
	} else if m.proc.Alive(t.r) {
		unix.Kill(pid, sig) // no pidfds (Linux < 5.3, or out of fds)
	}
	return true
}

// exitStatus returns how the program ended, from the init's report. Without
// one, the program was killed with SIGKILL: by us, by the namespace's end,
// or by its parent-death signal when the init died; lost says the init died
// without our doing.
func (t *tree) exitStatus() (code int, sig syscall.Signal, lost bool) {
	if ws := t.childStatus; ws != nil {
		if ws.Signaled() {
			return -1, ws.Signal(), false
		}
		return ws.ExitStatus(), 0, false
	}
	return -1, syscall.SIGKILL, !t.killed && t.violation == nil
}

func (t *tree) result(code int, sig syscall.Signal, lost bool) Result {
	res := Result{
		ExitCode:        code,
		Signal:          sig,
		InitLost:        lost,
		Violation:       t.violation,
		Killed:          t.killed,
		PeakMemoryBytes: t.peakMem,
		PeakProcesses:   t.peakProcs,
		PeakTasks:       t.peakTasks,
		PrivateDevShm:   t.devShm,
		TaskCeiling:     t.taskCeiling,
		TreeTracking:    t.tracking,
	}
	res.OutputBytes, res.OutputTruncated = t.proc.capture.totals()
	if t.rootState != nil {
		if ru, ok := t.rootState.SysUsage().(*syscall.Rusage); ok {
			t.proc.rootRusage = ru
		}
	}
	return res
}
