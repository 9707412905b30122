// Package atomicfile replaces files so that a reader sees the old content
// or the new, never a mix: the data goes to a temporary file in the same
// folder, which is then renamed over the target (rename(2) is atomic within
// a file system).
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Durability says whether WriteFile waits for the data to reach the disk.
type Durability bool

const (
	// Durable syncs the data before the rename, so that after a crash of
	// the machine the file holds the old content or the new, not an empty
	// file: for records the user keeps (job.json, precheck passes).
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
	tmp, err := os.CreateTemp(filepath.Dir(path), TempPattern(filepath.Base(path)))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	name := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return fail(err)
	}
	if d == Durable {
		if err := tmp.Sync(); err != nil {
			return fail(err)
		}
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
