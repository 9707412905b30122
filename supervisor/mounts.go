package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"stratbench/internal/units"
)

// A tree's private mounts: tmpfs file systems in its own mount namespace,
// sized by the Spec, that hold what the tree writes in memory no process's
// resident size shows. The host opens each one's root (through the init's
// /proc/PID/root) once the init mounted it, counts the bytes it holds as
// the tree's memory in every sample, and closes it when the tree is gone:
// the mount namespace dies with the tree, and a tmpfs with it once nothing
// holds it open. A capped folder (Spec.CappedDirs) is copied into the
// host's folder first (capped.go).

// privateMount is one private tmpfs the host counts.
type privateMount struct {
	name string // for messages: "its private /tmp", the capped folder's path
	path string // where it is mounted in the tree's mount namespace
	fd   int    // O_PATH fd of its root, opened through the init's root
	// capped is the host folder the mount's content is copied into when
	// the tree is gone, of size bytes; empty for /tmp and /dev/shm.
	capped string
	size   int64
}

// devShm is the usual path of POSIX shared memory (shm_open, Python's
// multiprocessing.shared_memory, semaphores).
const devShm = "/dev/shm"

// tmpfsOptions returns the mount options of a private tmpfs of size bytes:
// one inode per 4 KiB, so that empty files, which use no blocks, cannot
// fill kernel memory unseen.
func tmpfsOptions(size int64) string {
	return fmt.Sprintf("size=%d,nr_inodes=%d,mode=1777", size, max(size/4096, 1024))
}

// mountDevShm mounts the tree's private /dev/shm, in the init, and reports
// whether it did. Without a /dev/shm on the host there is nothing to hide:
// none is made (a program that needs one has none either way).
func mountDevShm(size int64) (bool, error) {
	if fi, err := os.Stat(devShm); err != nil || !fi.IsDir() {
		return false, nil
	}
	if err := unix.Mount("tmpfs", devShm, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, tmpfsOptions(size)); err != nil {
		return false, fmt.Errorf("mount the private %s (%s): %w", devShm, tmpfsOptions(size), err)
	}
	return true, nil
}

// maxCappedFiles bounds the files and folders of a capped folder's tmpfs:
// each is created again on the host's disk when the tree has ended, a wait
// nothing interrupts. Measured on a busy machine (load 17): 524,288 empty
// files (one per 4 KiB of 2 GiB) took 126 s to copy out, 16,384 took 9.7 s.
const maxCappedFiles = 4096

// cappedFiles returns how many files and folders a capped folder of size
// bytes may hold: one per 4 KiB, as the other private mounts, at most
// maxCappedFiles.
func cappedFiles(size int64) int64 { return min(max(size/4096, 1024), maxCappedFiles) }

// mountCapped mounts a capped folder's tmpfs over its path, in the init:
// the folder is empty in the tree, whatever the host's holds.
func mountCapped(c CappedDir) error {
	// Only the owner may write: the tmpfs's root belongs to the init's
	// uid, the program's.
	opts := fmt.Sprintf("size=%d,nr_inodes=%d,mode=0755", c.Bytes, cappedFiles(c.Bytes))
	if err := unix.Mount("tmpfs", c.Path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount the capped folder %s (%s): %w", c.Path, opts, err)
	}
	return nil
}

// checkCappedDirs checks that each path is absolute and clean, and that none
// lies in another.
func checkCappedDirs(cs []CappedDir) error {
	for i, c := range cs {
		switch {
		case c.Path != filepath.Clean(c.Path) || !filepath.IsAbs(c.Path) || c.Path == "/" || strings.IndexByte(c.Path, 0) >= 0:
			return fmt.Errorf("capped folder %q is not a clean absolute path", c.Path)
		case c.Bytes <= 0:
			return fmt.Errorf("capped folder %s: size %d is not positive", c.Path, c.Bytes)
		}
		for _, d := range cs[i+1:] {
			if c.Path == d.Path || strings.HasPrefix(c.Path, d.Path+"/") || strings.HasPrefix(d.Path, c.Path+"/") {
				return fmt.Errorf("capped folders %s and %s overlap", c.Path, d.Path)
			}
		}
	}
	return nil
}

// openMount opens the root of a private mount of the tree through its
// init's root (its mount namespace). Reading /proc/PID/root needs ptrace
// access to the non-dumpable init: stratbench has it as root, or as the
// owner of the init's user namespace. It must run before the host's ack:
// until then the init waits, alive, even if the program has already exited.
func (t *tree) openMount(name, path, capped string, size int64) error {
	m, err := t.findMount(name, path)
	if err != nil {
		return err
	}
	m.capped, m.size = capped, size
	t.mounts = append(t.mounts, m)
	return nil
}

// findMount opens the tmpfs at path in the tree's mount namespace (see
// openMount) and returns it, not yet counted.
func (t *tree) findMount(name, path string) (privateMount, error) {
	fd, err := unix.Open(fmt.Sprintf("/proc/%d/root%s", t.rootPID, path), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return privateMount{}, fmt.Errorf("open %s: %w", name, err)
	}
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		unix.Close(fd)
		return privateMount{}, fmt.Errorf("%s is not the tmpfs the init mounted (%v)", name, err)
	}
	return privateMount{name: name, path: path, fd: fd}, nil
}

// mountDev returns the device number of the file system fd lies on, 0 if
// it cannot tell.
func mountDev(fd int) uint64 {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return 0
	}
	return st.Dev
}

// mountBytes returns the bytes the private mounts hold, in all.
func (t *tree) mountBytes() int64 {
	var sum int64
	for _, m := range t.mounts {
		sum += m.used()
	}
	return sum
}

// used returns the bytes m holds (0 if it cannot tell).
func (m privateMount) used() int64 {
	var st unix.Statfs_t
	if err := unix.Fstatfs(m.fd, &st); err != nil {
		return 0
	}
	return int64(st.Blocks-st.Bfree) * st.Bsize
}

// mountUsage says what the private mounts hold, for a memory violation:
// "300.00 MiB in its private /dev/shm, 1.00 GiB in /jobs/x/artifacts"; empty
// when they hold nothing.
func (t *tree) mountUsage() string {
	var parts []string
	for _, m := range t.mounts {
		if n := m.used(); n > 0 {
			parts = append(parts, units.Bytes(n)+" in "+m.name)
		}
	}
	return strings.Join(parts, ", ")
}

// closeMounts closes the roots of the private mounts.
func (t *tree) closeMounts() {
	for _, m := range t.mounts {
		unix.Close(m.fd)
	}
	t.mounts = nil
}
