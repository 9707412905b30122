package supervisor

import (
	"strconv"

	"stratbench/supervisor/internal/procfs"
)

// ownChildren appends to dst the children of stratbench's main thread: the
// kernel reparents orphans to the first live thread of the subreaper, which
// in a Go program is the main thread. The full scans catch any exception.
func (h *Host) ownChildren(r *procfs.Reader, dst []int) []int {
	self := strconv.Itoa(h.pid)
	r.ReadPIDList("/proc/"+self+"/task/"+self+"/children", func(pid int) { dst = append(dst, pid) })
	return dst
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
		// environment (or is a zombie, whose environment reads empty).
		// stratbench's own value (a detached editor) is not a tree's,
		// nor is another live tree's. Any other value is a rewritten
		// environment or a forged marker: not a pass, it goes to t like
		// a missing marker.
		if v, ok, err := r.Getenv(pid, EnvMarker); err == nil && ok {
			if v == h.ownMarker {
				continue
			}
			if owner := h.trees[v]; owner != nil && owner != t {
				continue
			}
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
