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
			a.notice("the strategy's files in the job folder take " + units.Bytes(used) + ", over their " +
				units.Bytes(a.limit) + " cap: from now on no file of the run can grow (writes fail with \"File too large\"); the run goes on")
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
