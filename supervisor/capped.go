package supervisor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"stratbench/internal/units"
)

// Copying a capped folder (Spec.CappedDirs) out of its tmpfs into the host's
// folder, once the tree is gone: nothing writes there any more, and the
// tmpfs, detached with the tree's mount namespace, is still open through
// the host's fd of its root. Everything in it was written by the tree, so
// it is read as hostile: no link is followed (O_NOFOLLOW everywhere, every
// lookup relative to a folder already open), only regular files and
// folders are copied, holes stay holes (a sparse file of 1 GiB takes what
// it took in the tmpfs), and a file with several names is copied once and
// linked, so that what lands on the host's disk never exceeds what the
// tmpfs held: its size.

const (
	// copyBuffer is the size of one read and write.
	copyBuffer = 1 << 20
	// maxCopyDepth bounds the folders' nesting (each level holds two
	// fds while its content is copied); deeper ones are left out.
	maxCopyDepth = 128
	// readdirBatch is how many names are read from a folder at a time.
	readdirBatch = 1024
)

// copier copies one capped folder.
type copier struct {
	notice  func(string)
	buf     []byte
	dstRoot int               // the host's folder
	links   map[uint64]string // inode in the tmpfs -> its first copy, relative to dstRoot
	skipped int               // entries that are neither files nor folders, or too deep
	failed  int               // entries that could not be copied
	first   string            // the first of them, and why
	full    error             // the host's disk is full: stop
	files   int
	bytes   int64 // data bytes written
}

// copyOut copies what the tree left in its capped folders into the host's
// folders, and says in System lines what it could not.
func (t *tree) copyOut() {
	for _, m := range t.mounts {
		if m.capped != "" {
			copyCapped(m, t.proc.capture.notice)
		}
	}
}

func copyCapped(m privateMount, notice func(string)) {
	var fs unix.Statfs_t
	if err := unix.Fstatfs(m.fd, &fs); err == nil && (fs.Bavail == 0 || fs.Ffree == 0) {
		notice(fmt.Sprintf("supervisor: the run's files in %s reached their cap of %s (or of %d files and folders): "+
			"writes past it failed with \"No space left on device\"", m.capped, units.Bytes(m.size), cappedFiles(m.size)))
	}
	fail := func(err error) {
		notice(fmt.Sprintf("supervisor: what the run wrote in %s could not be copied there: %v", m.capped, err))
	}
	src, err := unix.Openat(m.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		fail(err)
		return
	}
	dst, err := unix.Open(m.capped, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(src)
		fail(err)
		return
	}
	defer unix.Close(dst)
	c := &copier{notice: notice, buf: make([]byte, copyBuffer), dstRoot: dst, links: map[uint64]string{}}
	c.dir(src, dst, "", 0) // closes src
	switch {
	case c.full != nil:
		notice(fmt.Sprintf("supervisor: %s is incomplete: the disk is full (%v); %d files (%s) were copied there from the run's own folder before",
			m.capped, c.full, c.files, units.Bytes(c.bytes)))
	case c.failed > 0:
		notice(fmt.Sprintf("supervisor: %d entries the run left in %s could not be copied there, the first: %s", c.failed, m.capped, c.first))
	}
	if c.skipped > 0 {
		notice(fmt.Sprintf("supervisor: %d entries the run left in %s were not copied there: only files and folders are, down to %d levels",
			c.skipped, m.capped, maxCopyDepth))
	}
}

// dir copies the content of the folder src into the folder dst (rel is its
// path below the root), and closes src.
func (c *copier) dir(src, dst int, rel string, depth int) {
	f := os.NewFile(uintptr(src), rel)
	defer f.Close()
	for c.full == nil {
		names, err := f.Readdirnames(readdirBatch)
		for _, name := range names {
			if c.full != nil {
				return
			}
			c.entry(src, dst, name, filepath.Join(rel, name), depth)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.notice(fmt.Sprintf("supervisor: read the run's folder %s: %v", rel, err))
			}
			return
		}
	}
}

// entry copies one entry of the folder src into dst.
func (c *copier) entry(src, dst int, name, rel string, depth int) {
	var st unix.Stat_t
	if err := unix.Fstatat(src, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return // gone: nothing runs there any more, so it cannot be
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		if depth >= maxCopyDepth {
			c.skipped++
			return
		}
		if err := unix.Mkdirat(dst, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			c.fail(rel, err)
			return
		}
		sub, err := unix.Openat(src, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return
		}
		dsub, err := unix.Openat(dst, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			unix.Close(sub)
			c.fail(rel, err)
			return
		}
		c.dir(sub, dsub, rel, depth+1)
		unix.Close(dsub)
	case unix.S_IFREG:
		if first, ok := c.links[st.Ino]; ok {
			if err := unix.Linkat(c.dstRoot, first, dst, name, 0); err != nil {
				c.fail(rel, err)
			}
			return
		}
		if err := c.file(src, dst, name, st); err != nil {
			c.fail(rel, err)
			return
		}
		c.files++
		if st.Nlink > 1 {
			c.links[st.Ino] = rel
		}
	default:
		c.skipped++
	}
}

// file copies the regular file name of src into dst, its holes kept.
func (c *copier) file(src, dst int, name string, st unix.Stat_t) error {
	in, err := unix.Openat(src, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(in)
	out, err := unix.Openat(dst, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(st.Mode&0o777|0o600))
	if err != nil {
		return err
	}
	defer unix.Close(out)
	for off := int64(0); off < st.Size; {
		data, err := unix.Seek(in, off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			break // a hole to the end
		}
		if err != nil {
			return err
		}
		hole, err := unix.Seek(in, data, unix.SEEK_HOLE)
		if err != nil {
			return err
		}
		hole = min(hole, st.Size)
		for off = data; off < hole; {
			n, err := unix.Pread(in, c.buf[:min(int64(len(c.buf)), hole-off)], off)
			if err != nil || n == 0 {
				return fmt.Errorf("read: %w", orEOF(err))
			}
			if _, err := writeAllAt(out, c.buf[:n], off); err != nil {
				return err
			}
			off += int64(n)
			c.bytes += int64(n)
		}
	}
	return unix.Ftruncate(out, st.Size)
}

// fail notes that rel could not be copied; a full disk ends the copy.
func (c *copier) fail(rel string, err error) {
	if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) {
		c.full = err
		return
	}
	if c.failed == 0 {
		c.first = fmt.Sprintf("%s (%v)", rel, err)
	}
	c.failed++
}

// writeAllAt writes b at off.
func writeAllAt(fd int, b []byte, off int64) (int, error) {
	done := 0
	for done < len(b) {
		n, err := unix.Pwrite(fd, b[done:], off+int64(done))
		if err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}

func orEOF(err error) error {
	if err == nil {
		return io.ErrUnexpectedEOF
	}
	return err
}
