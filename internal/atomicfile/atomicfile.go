// Package atomicfile replaces files so that a reader sees the old content
// or the new, never a mix: the data goes to a temporary file in the same
// folder, which is then renamed over the target (rename(2) is atomic within
// a file system). A durable write also syncs the data before the rename and
// the folder after it, so that a crash of the machine keeps the rename.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Durability says whether WriteFile waits for the data to reach the disk.
type Durability bool

const (
	// Durable syncs the data before the rename, so that after a crash of
	// the machine the file holds the old content or the new, not an empty
	// file, and the folder after it, so that the new content is the one
	// found there (ext4 and XFS may otherwise lose the rename itself): for
	// records the user keeps (job.json, sweep.json, precheck passes).
	Durable Durability = true
	// Volatile skips the sync: for files whose content does not outlive
	// the machine's uptime anyway (the process list of a running tree) or
	// that are checked before use (the installed bridge), where a sync
	// per write would only cost time.
	Volatile Durability = false
)

// TempPattern is the name of the temporary files of WriteFiles to a file
// named name, as a pattern of filepath.Match (and of os.CreateTemp, whose
// "*" is the random part): ".job.json.*". A WriteFile its process's death
// cut leaves one; name may itself be a pattern ("*.json") to find those of
// several files.
func TempPattern(name string) string { return "." + name + ".*" }

// WriteFile replaces path with data, with permissions perm (whatever the
// umask). Errors name path.
func WriteFile(path string, data []byte, perm fs.FileMode, d Durability) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit(perm, d)
}

// ErrNotRegular is the error of a path a user named for a file to write
// that exists and is not a regular file: a symbolic link, a folder, a
// FIFO, a device or a socket. Replacing it would replace what it is (a
// rename over /dev/stdout replaces the link, and as root the system's),
// and writing through it is not what a rename does.
var ErrNotRegular = errors.New("not a regular file")

// CheckTarget says whether path can be written by WriteRegular: its folder
// is a folder this process may create a file in, and path does not exist
// or is a regular file. Errors name path: a *fs.PathError wrapping
// ErrNotRegular (saying what path is), or the folder's error. It is for a
// path a user named, checked before the work whose result goes there.
func CheckTarget(path string) error {
	dir := filepath.Dir(path)
	info, err := os.Stat(dir)
	if err == nil && !info.IsDir() {
		err = unix.ENOTDIR
	}
	if err == nil {
		// Not for root, whom access(2) lets write anywhere: the write
		// itself then says what stopped it.
		err = unix.Access(dir, unix.W_OK|unix.X_OK)
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return &fs.PathError{Op: "write", Path: path, Err: fmt.Errorf("its folder %s: %w", dir, err)}
	}
	info, err = os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &fs.PathError{Op: "write", Path: path, Err: err}
	}
	if !info.Mode().IsRegular() {
		return &fs.PathError{Op: "write", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kind(info.Mode()))}
	}
	return nil
}

// kind names what a file that is not a regular file is.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a file"
}

// WriteRegular is WriteFile for a path a user named (an --out): it refuses
// a path that CheckTarget refuses, before writing and again just before
// the rename, so that a link, a FIFO or a device there is never replaced.
func WriteRegular(path string, data []byte, perm fs.FileMode, d Durability) error {
	if err := CheckTarget(path); err != nil {
		return err
	}
	f, err := Create(path)
	if err != nil {
		return err
	}
	f.regular = true
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit(perm, d)
}

// File is a file being written that replaces path when it is committed:
// for content written a piece at a time (a converted data file). Until
// Commit, path is untouched; Abort (or a process's death, which leaves a
// file named by TempPattern) never changes it.
type File struct {
	path    string
	tmp     *os.File
	regular bool // replace path only when it is a regular file (WriteRegular)
}

// Create starts writing a file that will replace path. Errors name path.
func Create(path string) (*File, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), TempPattern(filepath.Base(path)))
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &File{path: path, tmp: tmp}, nil
}

// Write writes to the temporary file; errors name path.
func (f *File) Write(p []byte) (int, error) {
	n, err := f.tmp.Write(p)
	if err != nil {
		err = fmt.Errorf("write %s: %w", f.path, err)
	}
	return n, err
}

// Abort removes the temporary file; path is untouched.
func (f *File) Abort() {
	f.tmp.Close()
	os.Remove(f.tmp.Name())
}

// Commit gives the file permissions perm (whatever the umask), syncs it
// when d is Durable, renames it over path, and then, when d is Durable,
// syncs path's folder.
func (f *File) Commit(perm fs.FileMode, d Durability) error {
	name := f.tmp.Name()
	fail := func(err error) error {
		f.Abort()
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if err := f.tmp.Chmod(perm); err != nil {
		return fail(err)
	}
	if d == Durable {
		if err := f.tmp.Sync(); err != nil {
			return fail(err)
		}
	}
	if err := f.tmp.Close(); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if f.regular {
		if err := CheckTarget(f.path); err != nil {
			os.Remove(name)
			return err
		}
	}
	if err := os.Rename(name, f.path); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if d == Durable {
		if err := SyncDir(filepath.Dir(f.path)); err != nil {
			return fmt.Errorf("write %s: %w", f.path, err)
		}
	}
	return nil
}

// SyncDir flushes the folder's entries to the disk: a rename or a file
// made in it then survives a crash of the machine.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
