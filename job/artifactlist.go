package job

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"syscall"
)

// MaxListedArtifacts bounds the files ListArtifacts names: a strategy may
// create any number of (empty) files; the rest are counted.
const MaxListedArtifacts = 1000

// Artifact is one file of a job's artifacts folder.
type Artifact struct {
	// Name is the file's path inside the artifacts folder, slash-separated
	// ("equity.png", or "plots/a.png" for a folder the strategy made).
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"` // its size
	// DiskBytes is the disk space it takes (its allocated blocks): less
	// than its size when it has holes, more when it was allocated past
	// its end (fallocate); what the artifacts' cap counts.
	DiskBytes int64 `json:"disk_bytes"`
}

// Artifacts is what a job's artifacts folder holds: the files the strategy
// wrote through ctx.artifact_path, and the record files (equity.csv,
// trades.csv, orders.csv) once the job has ended.
type Artifacts struct {
	Dir   string     `json:"dir"`   // the folder
	Files []Artifact `json:"files"` // by name, at most MaxListedArtifacts
	// Unlisted counts the files beyond Files.
	Unlisted int `json:"unlisted"`
	// Bytes is the size of every file, listed or not, and DiskBytes the
	// disk space they take (a file with several names once).
	Bytes     int64 `json:"bytes"`
	DiskBytes int64 `json:"disk_bytes"`
	// CapBytes caps the disk space of the strategy's files there, and
	// FileCapBytes each file the strategy writes (see Limits).
	CapBytes     int64 `json:"cap_bytes"`
	FileCapBytes int64 `json:"file_cap_bytes"`
}

// ListArtifacts lists the artifacts folder of the job folder jobDir. A job
// whose folder has no artifacts folder (yet) has none. Symbolic links are
// listed as the links they are (their own size), never followed.
func ListArtifacts(jobDir string) (Artifacts, error) {
	l := DefaultLimits()
	a := Artifacts{Dir: filepath.Join(jobDir, "artifacts"), Files: []Artifact{},
		CapBytes: l.ArtifactsBytes, FileCapBytes: l.ArtifactFileBytes}
	type inode struct{ dev, ino uint64 }
	seen := map[inode]bool{}
	// WalkDir visits in lexical order, so the files listed are the first
	// by name whatever their number.
	err := filepath.WalkDir(a.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == a.Dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return nil // gone meanwhile, or unreadable: skip it
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		var disk int64
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			disk = st.Blocks * 512
			if id := (inode{st.Dev, st.Ino}); st.Nlink > 1 && seen[id] {
				disk = 0 // counted with its first name
			} else if st.Nlink > 1 {
				seen[id] = true
			}
		}
		a.Bytes += info.Size()
		a.DiskBytes += disk
		if len(a.Files) == MaxListedArtifacts {
			a.Unlisted++
			return nil
		}
		rel, err := filepath.Rel(a.Dir, path)
		if err != nil {
			return nil
		}
		a.Files = append(a.Files, Artifact{Name: filepath.ToSlash(rel), Bytes: info.Size(), DiskBytes: disk})
		return nil
	})
	if err != nil {
		return a, fmt.Errorf("list the artifacts of %s: %w", jobDir, err)
	}
	sort.Slice(a.Files, func(i, j int) bool { return a.Files[i].Name < a.Files[j].Name })
	return a, nil
}

// Path returns the file's path on disk.
func (a Artifacts) Path(f Artifact) string { return filepath.Join(a.Dir, filepath.FromSlash(f.Name)) }
