package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Paths of the host's /tmp kept visible under a tree's private /tmp
// (Spec.TmpMounts): the init copies their mounts while the host's /tmp is
// still in view, mounts the tmpfs over /tmp, then attaches each copy at its
// own path.

// checkTmpMounts checks that each path is absolute, clean and strictly
// below /tmp.
func checkTmpMounts(ms []TmpMount) error {
	for _, m := range ms {
		if m.Path != filepath.Clean(m.Path) || !strings.HasPrefix(m.Path, "/tmp/") || strings.IndexByte(m.Path, 0) >= 0 {
			return fmt.Errorf("path %q kept under the private /tmp is not a clean path below /tmp", m.Path)
		}
	}
	return nil
}

// keptMount is a detached copy of a path of the host's /tmp, waiting to be
// attached at the same path in the private /tmp.
type keptMount struct {
	path string
	fd   int // from open_tree
	dir  bool
}

// cloneTmpMounts copies the mounts of the paths to keep, parents first, each
// read-only unless writable. A path below another that is kept with at
// least its rights is seen through that one and needs no copy of its own.
//
// open_tree(OPEN_TREE_CLONE) is a bind mount not yet attached anywhere;
// AT_RECURSIVE takes the mounts below the path along (in a user namespace
// the kernel refuses to copy a mount without the mounts it inherited on top
// of it, which would reveal what they cover). Read-only is set on the copy
// with mount_setattr, which only adds the flag and so keeps the flags the
// kernel locked in a user namespace, where a remount would have to repeat
// them.
func cloneTmpMounts(ms []TmpMount) ([]keptMount, error) {
	ms = slices.Clone(ms)
	slices.SortFunc(ms, func(a, b TmpMount) int { return strings.Compare(a.Path, b.Path) })
	var kept []keptMount
	var done []TmpMount
	for _, m := range ms {
		if slices.ContainsFunc(done, func(d TmpMount) bool {
			return strings.HasPrefix(m.Path, d.Path+"/") && (d.Writable || !m.Writable) || d == m
		}) {
			continue
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, m.Path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			closeKept(kept)
			return nil, fmt.Errorf("keep %s under the private /tmp: open_tree: %w", m.Path, err)
		}
		k := keptMount{path: m.Path, fd: fd}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		k.dir = st.Mode&unix.S_IFMT == unix.S_IFDIR
		if err == nil && !m.Writable {
			err = unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
		}
		kept = append(kept, k)
		if err != nil {
			closeKept(kept)
			return nil, fmt.Errorf("keep %s under the private /tmp read-only: %w", m.Path, err)
		}
		done = append(done, m)
	}
	return kept, nil
}

func closeKept(kept []keptMount) {
	for _, k := range kept {
		unix.Close(k.fd)
	}
}

// attach creates the mount point in the private /tmp (unless a kept parent
// already shows it) and attaches the copy there.
func (k keptMount) attach() error {
	if _, err := os.Stat(k.path); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(k.path), 0o755); err != nil {
			return fmt.Errorf("keep %s under the private /tmp: %w", k.path, err)
		}
		if k.dir {
			err = os.Mkdir(k.path, 0o755)
		} else {
			err = os.WriteFile(k.path, nil, 0o644)
		}
		if err != nil {
			return fmt.Errorf("keep %s under the private /tmp: %w", k.path, err)
		}
	}
	if err := unix.MoveMount(k.fd, "", unix.AT_FDCWD, k.path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("keep %s under the private /tmp: move_mount: %w", k.path, err)
	}
	return nil
}
