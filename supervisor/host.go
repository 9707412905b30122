package supervisor

import (
	"strconv"

	"stratbench/supervisor/internal/procfs"
)

// ownChildren appends to dst the children of stratbench's main thread and
// of the threads that started live roots; tids is scratch space, returned
// for reuse. The kernel reparents orphans to the first live thread of the
// subreaper, which in a Go program is the main thread; a root's
// clone(CLONE_PARENT) children belong to the thread that started the root.
// The full scans catch any exception.
func (h *Host) ownChildren(r *procfs.Reader, dst, tids []int) ([]int, []int) {
	h.mu.Lock()
	tids = append(tids[:0], h.pid)
	for tid := range h.rootThreads {
		tids = append(tids, tid)
	}
	h.mu.Unlock()
	self := strconv.Itoa(h.pid)
	for _, tid := range tids {
		r.ReadPIDList("/proc/"+self+"/task/"+strconv.Itoa(tid)+"/children", func(pid int) { dst = append(dst, pid) })
	}
	return dst, tids
}

// adoptOrphans appends to q those of candidates (children of stratbench)
// that are orphans of t no live tree tracks yet, and claims them for t.
func (h *Host) adoptOrphans(t *tree, r *procfs.Reader, q []pending, candidates []int) []pending {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, pid := range candidates {
		if h.roots[pid] {
			continue // os/exec waits for it; its own tree tracks it
		}
		if c, ok := h.claimed[pid]; ok && c.tree == t {
			continue // already a member, queued by the caller
		}
		st, err := r.Stat(pid)
		if err != nil || st.PPID != h.pid || st.SID == h.sid {
			continue // gone, or a child stratbench started outside the Host
		}
		if c, ok := h.claimed[pid]; ok && c.start == st.StartTime {
			continue // another live tree tracks it
		}
		// The marker names the tree unless the process replaced its
		// environment (or is a zombie, whose environment reads empty). A
		// marker that names no live tree is stratbench's own (a detached
		// editor) or another stratbench's: not an orphan of t.
		if v, ok, err := r.Getenv(pid, EnvMarker); err == nil && ok && h.trees[v] != t {
			continue
		}
		h.claimed[pid] = claim{st.StartTime, t}
		q = append(q, pending{pid: pid, start: st.StartTime})
	}
	return q
}

// claim records that t tracks process pid.
func (h *Host) claim(pid int, start uint64, t *tree) {
	h.mu.Lock()
	h.claimed[pid] = claim{start, t}
	h.mu.Unlock()
}

// release forgets t's claim on pid.
func (h *Host) release(pid int, t *tree) {
	h.mu.Lock()
	if c, ok := h.claimed[pid]; ok && c.tree == t {
		delete(h.claimed, pid)
	}
	h.mu.Unlock()
}

// forget unregisters a tree that is gone.
func (h *Host) forget(t *tree) {
	h.mu.Lock()
	delete(h.trees, t.marker)
	for pid, c := range h.claimed {
		if c.tree == t {
			delete(h.claimed, pid)
		}
	}
	h.mu.Unlock()
}
