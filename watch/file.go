package watch

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// hashFile returns the SHA-256 of the regular file at path. It never blocks
// on a FIFO or device put in the file's place, and never reads more than
// MaxFileSize bytes. A missing file gives an error that matches
// fs.ErrNotExist.
func hashFile(path string) ([32]byte, error) {
	var sum [32]byte
	// O_NONBLOCK makes opening a FIFO return at once instead of waiting for
	// a writer; it changes nothing for a regular file.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return sum, err
	}
	if !info.Mode().IsRegular() {
		return sum, fmt.Errorf("%s is not a regular file (%s): not reading it", filepath.Base(path), info.Mode().Type())
	}
	if info.Size() > MaxFileSize {
		return sum, tooLarge(path)
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return sum, fmt.Errorf("read %s: %w", path, err)
	}
	if n > MaxFileSize {
		return sum, tooLarge(path) // it grew while being read
	}
	h.Sum(sum[:0])
	return sum, nil
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
