package engine

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"path/filepath"
	"syscall"
	"time"

	"stratbench/internal/units"
)

// The strategy's files in the job folder (artifacts/) are capped by the
// kernel where the worker is sandboxed: the folder is a tmpfs of the cap's
// size in the tree's mount namespace (supervisor.Spec.CappedDirs), copied
// into the job folder when the tree has ended, so no rate of writes or
// allocations can pass it. Outside the sandbox the strategy is the user's
// own code, which may write anywhere the user may: each file is capped
// (RLIMIT_FSIZE) and the folder is checked, every period while the worker
// runs and once more when it has ended, so that a run shorter than a
// period is checked too.

// artifactsWatch checks, every period while the worker runs, the disk space
// that the strategy's files in the job folder take (allocated blocks, at
// least one block per file or folder, so that a million empty files count
// too; a file with several names once). Over the cap it stops every file of
// the tree from growing, once, with one notice that says what they take:
// further writes fail with EFBIG inside the strategy, which goes on
// running.
type artifactsWatch struct {
	dirs   []string
	limit  int64
	every  time.Duration
	freeze func()       // stops the growth
	notice func(string) // a system line in the job's log
	// over is set once the cap was found passed (and said); the final
	// check reads it after run returned.
	over bool
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
		if _, over := diskUsage(a.dirs, a.limit); over {
			a.freeze()
			a.over = true
			// Counted in full once growth has stopped: the notice
			// states what the files take, not where the count stopped.
			used, _ := diskUsage(a.dirs, math.MaxInt64)
			a.notice("the strategy's files in the job folder take " + units.Bytes(used) + ", over their " +
				units.Bytes(a.limit) + " cap: from now on no file of the run can grow (writes fail with \"File too large\"); the run goes on")
			return
		}
	}
}

// final checks the folder once the worker has ended (run has returned):
// what was written after the last periodic check, or by a run shorter
// than a period, is counted too. It says so, once, with the true size.
func (a *artifactsWatch) final() {
	if a.over {
		return
	}
	if _, over := diskUsage(a.dirs, a.limit); over {
		used, _ := diskUsage(a.dirs, math.MaxInt64)
		a.notice("the strategy's files in the job folder take " + units.Bytes(used) + ", over their " +
			units.Bytes(a.limit) + " cap (found when the worker had ended)")
	}
}

// diskUsage returns the disk space under dirs, counting until it exceeds
// limit (a walk of a huge tree stops there): for each file its allocated
// blocks (st_blocks: a sparse file counts what it holds, a file allocated
// with fallocate what it took, whatever its size says), at least one block
// per file or folder, and a file with several names once.
func diskUsage(dirs []string, limit int64) (used int64, over bool) {
	const block = 4096
	errStop := errors.New("over")
	type inode struct{ dev, ino uint64 }
	seen := map[inode]bool{}
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // gone meanwhile, or unreadable: skip it
			}
			size := int64(block)
			if info, err := d.Info(); err == nil {
				if st, ok := info.Sys().(*syscall.Stat_t); ok {
					if st.Nlink > 1 && !d.IsDir() {
						if seen[inode{st.Dev, st.Ino}] {
							return nil
						}
						seen[inode{st.Dev, st.Ino}] = true
					}
					if st.Blocks*512 > size {
						size = min(st.Blocks*512, math.MaxInt64/4)
					}
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
