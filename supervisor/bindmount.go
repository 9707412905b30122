package supervisor

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Files a tree sees in place of others (Spec.BindMounts, RunSpec.BindMounts):
// each Source is bind-mounted over its Target in the tree's own mount
// namespace, so that what the tree's processes open at Target is Source,
// and nothing changes for anyone else. `stratbench check` uses it to show
// a strategy that reads its data files itself the files cut where its
// replay's data ends (docs/robustness.md).

// BindMount is a file or folder (Source) a tree sees at the path of another
// (Target), which must exist. Both are absolute and clean.
type BindMount struct {
	Source string `json:"source"`
	Target string `json:"target"`
}

// ErrBindMountsUnavailable is wrapped by Start's and Fork's error when bind
// mounts were asked for where the tree has no mount namespace of its own:
// without the PID-namespace tree tracking.
var ErrBindMountsUnavailable = errors.New("bind mounts need the PID-namespace tree tracking")

// maxBindMounts bounds the bind mounts of a tree.
const maxBindMounts = 256

// checkBindMounts checks that each path is absolute, clean and without a
// NUL.
func checkBindMounts(ms []BindMount) error {
	if len(ms) > maxBindMounts {
		return fmt.Errorf("%d bind mounts, at most %d", len(ms), maxBindMounts)
	}
	for _, m := range ms {
		for _, p := range []string{m.Source, m.Target} {
			if !filepath.IsAbs(p) || p != filepath.Clean(p) || strings.IndexByte(p, 0) >= 0 || p == "/" {
				return fmt.Errorf("bind mount %q over %q: not an absolute, clean path", m.Source, m.Target)
			}
		}
	}
	return nil
}

// boundMount is a detached copy of a bind mount's source, waiting to be
// attached over its target.
type boundMount struct {
	BindMount
	fd int // from open_tree
}

// cloneBindMounts copies the sources (open_tree(OPEN_TREE_CLONE), a bind
// mount not yet attached: taken before a private /tmp could hide them).
func cloneBindMounts(ms []BindMount) ([]boundMount, error) {
	var out []boundMount
	for _, m := range ms {
		fd, err := unix.OpenTree(unix.AT_FDCWD, m.Source, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err != nil {
			closeBound(out)
			return nil, fmt.Errorf("bind mount %s: open_tree: %w", m.Source, err)
		}
		out = append(out, boundMount{m, fd})
	}
	return out, nil
}

func closeBound(ms []boundMount) {
	for _, m := range ms {
		unix.Close(m.fd)
	}
}

// attach mounts the copy over its target, which must exist: nothing is
// created for it (the target lies in the host's own folders).
func (m boundMount) attach() error {
	if err := unix.MoveMount(m.fd, "", unix.AT_FDCWD, m.Target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("bind mount %s over %s: move_mount: %w", m.Source, m.Target, err)
	}
	return nil
}
