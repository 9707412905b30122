package watch

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// hashFile returns the SHA-256 of the regular file at path. It never blocks
// on a FIFO or device put in the file's place, and never reads more than
// MaxFileSize bytes. A missing file gives an error that matches
// fs.ErrNotExist.
func hashFile(path string) ([32]byte, error) {
	var sum [32]byte
	// O_NONBLOCK makes opening a FIFO return at once instead of waiting for
	// a writer. The descriptor is read directly, never through the
	// runtime's poller: a "regular" file the kernel can poll, such as
	// /proc/kmsg, would otherwise park the read until it has data, for
	// ever; read directly, it says EAGAIN, which is an error here. A
	// regular file on a disk never says it.
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return sum, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return sum, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if mode := uint32(st.Mode); mode&unix.S_IFMT != unix.S_IFREG {
		return sum, fmt.Errorf("%s is not a regular file (%s): not reading it", filepath.Base(path), fileType(mode))
	}
	if st.Size > MaxFileSize {
		return sum, tooLarge(path)
	}
	h := sha256.New()
	buf := make([]byte, 64<<10)
	var n int64
	for {
		k, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return sum, fmt.Errorf("read %s: %w", path, err)
		}
		if k <= 0 {
			break
		}
		h.Write(buf[:k])
		if n += int64(k); n > MaxFileSize {
			return sum, tooLarge(path) // it grew while being read
		}
	}
	h.Sum(sum[:0])
	return sum, nil
}

// fileType names the type of a file that is not a regular one, as
// fs.FileMode's String does.
func fileType(mode uint32) fs.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}

func tooLarge(path string) error {
	return fmt.Errorf("%s is larger than %d MiB: not reading it", filepath.Base(path), MaxFileSize>>20)
}

// fileStat is what a poll compares: a save changes the size or the
// modification time, or removes or replaces the file.
type fileStat struct {
	exists  bool
	size    int64
	modTime int64 // nanoseconds since the epoch
	err     string
}

func statFile(path string) fileStat {
	info, err := os.Stat(path)
	switch {
	case os.IsNotExist(err):
		return fileStat{}
	case err != nil:
		return fileStat{err: err.Error()}
	}
	return fileStat{exists: true, size: info.Size(), modTime: info.ModTime().UnixNano()}
}
