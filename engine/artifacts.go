package engine

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/supervisor"
)

// fileSizeLimit is RLIMIT_FSIZE on the worker's tree: each file a process
// of the tree writes is capped at the limit (a write past it fails with
// EFBIG; CPython ignores SIGXFSZ, so Python code gets OSError "File too
// large"). Soft and hard limits are set alike, so the strategy cannot raise
// it again. Lowering it to 0 stops every file from growing.
//
// Interim, until the supervisor applies the limit itself (Spec.FileSizeBytes
// between fork and exec, Process.SetFileSizeLimit on the whole tree): the
// engine sets it with prlimit(2) on the root right after its start (before
// the interpreter has imported anything) and on every process of the tree
// the samples show, each time the limit changes. A process the samples miss
// inherits the limit of its parent, which they did not miss, except for one
// forked in the few milliseconds before its parent was limited.
type fileSizeLimit struct {
	mu      sync.Mutex
	bytes   int64
	applied map[int]int64 // pid -> limit set on it, for the live processes
}

func newFileSizeLimit(n int64) *fileSizeLimit {
	return &fileSizeLimit{bytes: n, applied: map[int]int64{}}
}

// startTree limits the tree's root right after it started.
//
// To connect when the supervisor has it: spec.FileSizeBytes = l.bytes in
// Job.startWorker, and this becomes a no-op.
func (l *fileSizeLimit) startTree(p *supervisor.Process) {
	l.apply([]int{p.PID()})
}

// set changes the limit and applies it to the processes of the tree that
// the last sample showed.
//
// To connect when the supervisor has it: p.SetFileSizeLimit(n).
func (l *fileSizeLimit) set(n int64, pids []int) {
	l.mu.Lock()
	l.bytes = n
	l.mu.Unlock()
	l.apply(pids)
}

// apply sets the limit on every pid that does not have it yet, and forgets
// the pids that are gone.
func (l *fileSizeLimit) apply(pids []int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	live := make(map[int]int64, len(pids))
	for _, pid := range pids {
		if got, ok := l.applied[pid]; ok && got == l.bytes {
			live[pid] = got
			continue
		}
		if setFileSize(pid, l.bytes) == nil {
			live[pid] = l.bytes
		}
	}
	l.applied = live
}

// setFileSize lowers RLIMIT_FSIZE of pid to n (never raises it: a hard
// limit the user set lower stays).
func setFileSize(pid int, n int64) error {
	var old unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, nil, &old); err != nil {
		return err
	}
	v := uint64(n)
	if old.Max < v {
		v = old.Max
	}
	return unix.Prlimit(pid, unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: v, Max: v}, nil)
}

// artifactsWatch checks, every period while the worker runs, the disk space
// that the strategy's files in the job folder take (allocated blocks, at
// least one block per file or folder, so that a million empty files count
// too). Over the cap it stops every file of the tree from growing, once,
// with one notice: further writes fail with EFBIG inside the strategy,
// which goes on running.
type artifactsWatch struct {
	dirs   []string
	limit  int64
	every  time.Duration
	freeze func()       // stops the growth
	notice func(string) // a system line in the job's log
}

// run checks until ctx is done or the cap was reached.
func (a *artifactsWatch) run(ctx context.Context) {
	t := time.NewTicker(a.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if used, over := diskUsage(a.dirs, a.limit); over {
			a.freeze()
			a.notice("the strategy's files in the job folder take " + formatBytes(used) + ", over their " +
				formatBytes(a.limit) + " cap: from now on no file of the run can grow (writes fail with \"File too large\"); the run goes on")
			return
		}
	}
}

// diskUsage returns the disk space under dirs, counting until it exceeds
// limit (a walk of a huge tree stops there).
func diskUsage(dirs []string, limit int64) (used int64, over bool) {
	const block = 4096
	errStop := errors.New("over")
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // gone meanwhile, or unreadable: skip it
			}
			size := int64(block)
			if info, err := d.Info(); err == nil {
				if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Blocks*512 > size {
					size = min(st.Blocks*512, math.MaxInt64/4)
				}
			}
			used += size
			if used > limit {
				return errStop
			}
			return nil
		})
		if used > limit {
			return used, true
		}
	}
	return used, false
}
