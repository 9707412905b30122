// Package nofollow reads, writes and removes inside a folder without
// following a symbolic link. A Dir is a folder held open by its descriptor;
// every name given to its methods is one component of a path (no "/", not
// "." or ".."), opened relative to that descriptor with O_NOFOLLOW, and a
// folder is entered only when it is one (not a link to one). So nothing
// reached through a Dir lies outside it, whatever the folder holds and
// whatever another process renames or links in it meanwhile: a link is
// never taken for its target, and a name swapped for a link between a
// check and its use makes the use fail instead of reaching elsewhere.
//
// It is how stratbench touches its home ($STRATBENCH_HOME), whose content
// it does not trust to name a path (see docs/ARCHITECTURE.md, "The home").
package nofollow

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/internal/atomicfile"
)

// ErrSymlink is the error of a name that is a symbolic link where a file
// or a folder is expected.
var ErrSymlink = errors.New("a symbolic link (not followed)")

// ErrNotRegular is the error of a name that is neither a regular file nor
// a link where a regular file is expected (a FIFO, a device, a socket, a
// folder): reading one could block or never end.
var ErrNotRegular = errors.New("not a regular file")

// ErrBadName is the error of a name that is not one path component.
var ErrBadName = errors.New("not a plain file name")

// ErrTooLarge is the error of ReadFile for a file longer than its limit.
var ErrTooLarge = errors.New("larger than the limit")

// Dir is a folder open by its descriptor. Its methods are safe for
// concurrent use.
type Dir struct {
	f    *os.File
	path string // for messages: the path the folder was opened by
}

// Open opens the folder at path. The last component of path must be a
// folder, not a symbolic link to one (ErrSymlink); the components before it
// are resolved as usual (they are the caller's to trust).
func Open(path string) (*Dir, error) {
	fd, err := openDir(unix.AT_FDCWD, path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{f: os.NewFile(uintptr(fd), path), path: path}, nil
}

// openDir opens the folder name relative to dirfd, never through a link.
func openDir(dirfd int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err == unix.ELOOP || err == unix.ENOTDIR && isLink(dirfd, name) {
			return -1, ErrSymlink
		}
		return fd, err
	}
}

// isLink reports whether name, relative to dirfd, is a symbolic link.
func isLink(dirfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

// Path returns the path the folder was opened by (for messages).
func (d *Dir) Path() string { return d.path }

// Join returns the path of name in the folder (for messages).
func (d *Dir) Join(name string) string { return filepath.Join(d.path, name) }

// Close closes the folder's descriptor.
func (d *Dir) Close() error { return d.f.Close() }

func (d *Dir) fd() int { return int(d.f.Fd()) }

// checkName refuses a name that is not one path component.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') || strings.ContainsRune(name, 0) {
		return fmt.Errorf("%q: %w", name, ErrBadName)
	}
	return nil
}

// Sub opens the folder name in d; a link there is ErrSymlink, whatever it
// points to.
func (d *Dir) Sub(name string) (*Dir, error) {
	if err := checkName(name); err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.Join(name), Err: err}
	}
	fd, err := openDir(d.fd(), name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.Join(name), Err: err}
	}
	return &Dir{f: os.NewFile(uintptr(fd), d.Join(name)), path: d.Join(name)}, nil
}

// Entries returns the folder's entries, sorted by name, as os.ReadDir does:
// each entry's type is the entry's own (a link is a link). An entry's Info
// looks it up by its path: use Lstat, which does not.
func (d *Dir) Entries() ([]fs.DirEntry, error) {
	// A descriptor of its own: reading moves the offset, and d may be read
	// by other goroutines at once.
	fd, err := openDir(d.fd(), ".")
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: d.path, Err: err}
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// Lstat describes name in d itself: a link is described as the link.
func (d *Dir) Lstat(name string) (fs.FileInfo, error) {
	if err := checkName(name); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: d.Join(name), Err: err}
	}
	var st unix.Stat_t
	for {
		err := unix.Fstatat(d.fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "lstat", Path: d.Join(name), Err: err}
		}
		return newInfo(name, &st), nil
	}
}

// OpenFile opens the regular file name in d with flag (os.O_RDONLY,
// os.O_RDWR|os.O_CREATE, …) and perm for a file it creates. A link is
// ErrSymlink, and anything but a regular file ErrNotRegular: the open does
// not wait for a FIFO's writer, and the file is refused before it is read.
func (d *Dir) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	if err := checkName(name); err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.Join(name), Err: err}
	}
	var fd int
	var err error
	for {
		fd, err = unix.Openat(d.fd(), name, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, uint32(perm.Perm()))
		if err != unix.EINTR {
			break
		}
	}
	if err == unix.ELOOP {
		err = ErrSymlink
	} else if err == unix.ENXIO || err == unix.EISDIR {
		err = ErrNotRegular // a socket, or a folder opened for writing
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.Join(name), Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: d.Join(name), Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: d.Join(name), Err: ErrNotRegular}
	}
	// Back to blocking reads: O_NONBLOCK only kept the open from waiting.
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: d.Join(name), Err: err}
	}
	return os.NewFile(uintptr(fd), d.Join(name)), nil
}

// Open opens the regular file name in d for reading (see OpenFile).
func (d *Dir) Open(name string) (*os.File, error) { return d.OpenFile(name, os.O_RDONLY, 0) }

// ReadFile reads the regular file name in d (see OpenFile), refusing one
// longer than limit bytes (ErrTooLarge) before it holds more of it.
func (d *Dir) ReadFile(name string, limit int64) ([]byte, error) {
	f, err := d.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &fs.PathError{Op: "read", Path: d.Join(name), Err: fmt.Errorf("%w of %d bytes", ErrTooLarge, limit)}
	}
	return data, nil
}

// Remove removes the file, link or empty folder name in d (a link itself,
// never its target). A name that does not exist is fs.ErrNotExist.
func (d *Dir) Remove(name string) error {
	if err := checkName(name); err != nil {
		return &fs.PathError{Op: "remove", Path: d.Join(name), Err: err}
	}
	err := ignoringEINTR(func() error { return unix.Unlinkat(d.fd(), name, 0) })
	if err == unix.EISDIR || err == unix.EPERM && isDir(d.fd(), name) {
		err = ignoringEINTR(func() error { return unix.Unlinkat(d.fd(), name, unix.AT_REMOVEDIR) })
	}
	if err != nil {
		return &fs.PathError{Op: "remove", Path: d.Join(name), Err: err}
	}
	return nil
}

// isDir reports whether name, relative to dirfd, is a folder (not a link).
func isDir(dirfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// RemoveAll removes name in d and, for a folder, everything in it, as
// os.RemoveAll does but without following a link anywhere: a link is
// removed as a link, and a folder is entered by its descriptor, so that
// nothing outside name is removed even when the tree changes meanwhile.
// A name that does not exist is no error.
func (d *Dir) RemoveAll(name string) error {
	if err := checkName(name); err != nil {
		return &fs.PathError{Op: "remove", Path: d.Join(name), Err: err}
	}
	err := d.Remove(name)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if !isDir(d.fd(), name) {
		return err
	}
	sub, err := d.Sub(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	err = sub.removeContents()
	sub.Close()
	if err != nil {
		return err
	}
	if err := d.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// removeBatch is how many names removeContents reads at a time: a folder
// of millions of files is removed in bounded memory.
const removeBatch = 1024

// removeContents removes everything in d, reading its names a batch at a
// time from a descriptor of its own, opened again after each batch (a
// folder read while its entries go may skip some). A batch that removes
// nothing is an error: what cannot be removed would be read forever.
func (d *Dir) removeContents() error {
	for {
		fd, err := openDir(d.fd(), ".")
		if err != nil {
			return &fs.PathError{Op: "readdir", Path: d.path, Err: err}
		}
		f := os.NewFile(uintptr(fd), d.path)
		names, err := f.Readdirnames(removeBatch)
		f.Close()
		if err == io.EOF || err == nil && len(names) == 0 {
			return nil
		}
		if err != nil {
			return err
		}
		for _, name := range names {
			if err := d.RemoveAll(name); err != nil {
				return err
			}
		}
		if len(names) < removeBatch {
			return nil
		}
	}
}

// Rename renames the entry name in d to newName in to (which may be d):
// the entry itself, a link included, never its target; an entry at
// newName is replaced as rename(2) replaces it.
func (d *Dir) Rename(name string, to *Dir, newName string) error {
	if err := checkName(name); err != nil {
		return &os.LinkError{Op: "rename", Old: d.Join(name), New: to.Join(newName), Err: err}
	}
	if err := checkName(newName); err != nil {
		return &os.LinkError{Op: "rename", Old: d.Join(name), New: to.Join(newName), Err: err}
	}
	err := ignoringEINTR(func() error { return unix.Renameat(d.fd(), name, to.fd(), newName) })
	if err != nil {
		return &os.LinkError{Op: "rename", Old: d.Join(name), New: to.Join(newName), Err: err}
	}
	return nil
}

// WriteFile replaces the file name in d with data, atomically and durably,
// as atomicfile.WriteFile does (a temporary file named by
// atomicfile.TempPattern, synced, renamed over name, then the folder
// synced), with perm whatever the umask. A link at name is replaced, not
// written through.
func (d *Dir) WriteFile(name string, data []byte, perm fs.FileMode) error {
	if err := checkName(name); err != nil {
		return &fs.PathError{Op: "write", Path: d.Join(name), Err: err}
	}
	var b [8]byte
	var tmp string
	var f *os.File
	for range 16 {
		rand.Read(b[:])
		tmp = strings.Replace(atomicfile.TempPattern(name), "*", hex.EncodeToString(b[:]), 1)
		var err error
		f, err = d.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("write %s: %w", d.Join(name), err)
		}
	}
	if f == nil {
		return fmt.Errorf("write %s: no free temporary name", d.Join(name))
	}
	_, err := f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.Rename(tmp, d, name)
	}
	if err != nil {
		d.Remove(tmp)
		return fmt.Errorf("write %s: %w", d.Join(name), err)
	}
	if err := d.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", d.Join(name), err)
	}
	return nil
}

// Sync flushes the folder's entries (a rename in it) to the disk.
func (d *Dir) Sync() error { return d.f.Sync() }

// ErrLocked is the error of TryLock for a folder another open descriptor
// holds a lock on that conflicts with the one asked for.
var ErrLocked = errors.New("locked by another")

// TryLock takes a flock(2) lock on the folder's descriptor without
// waiting: shared, or exclusive when exclusive is true. It is held until
// Close (or the process's end: the kernel drops it, also after SIGKILL);
// a conflicting lock held through another descriptor, in this process or
// another, is ErrLocked.
func (d *Dir) TryLock(exclusive bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	err := ignoringEINTR(func() error { return unix.Flock(d.fd(), how|unix.LOCK_NB) })
	if errors.Is(err, unix.EWOULDBLOCK) {
		return &fs.PathError{Op: "lock", Path: d.path, Err: ErrLocked}
	}
	if err != nil {
		return &fs.PathError{Op: "lock", Path: d.path, Err: err}
	}
	return nil
}

func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != unix.EINTR {
			return err
		}
	}
}

// info is the fs.FileInfo of an Lstat.
type info struct {
	name string
	size int64
	mode fs.FileMode
	mod  time.Time
}

func newInfo(name string, st *unix.Stat_t) *info {
	mode := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	return &info{name: name, size: st.Size, mode: mode, mod: time.Unix(st.Mtim.Unix())}
}

func (i *info) Name() string       { return i.name }
func (i *info) Size() int64        { return i.size }
func (i *info) Mode() fs.FileMode  { return i.mode }
func (i *info) ModTime() time.Time { return i.mod }
func (i *info) IsDir() bool        { return i.mode.IsDir() }
func (i *info) Sys() any           { return nil }
