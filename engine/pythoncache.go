package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"stratbench/internal/atomicfile"
)

// The probe's answer is kept in the cache folder, so that stratbench does
// not start the interpreter once more at every start only to learn what it
// learnt last time (15-50 ms here, most of it site's .pth files). An answer
// is kept beside the state of the files and folders it was derived from,
// its inputs as the probe names them (probeScript), and used only while
// every one of them is as it was: an interpreter upgraded in place, a
// virtual environment made again, a package installed or removed (which
// writes site-packages, and a .pth file there) each makes it stale, and the
// interpreter is probed again.
//
// The cache is the host's: a sandboxed worker cannot write the cache folder
// (its Landlock policy writes only the job's artifacts and its own /tmp), and a strategy outside the sandbox is the user's own code,
// which could as well replace the interpreter the cache describes.

// maxCachedPythons bounds the probe cache: one file per interpreter path
// (and loader environment), the least recently probed removed first.
const maxCachedPythons = 32

// racyWindow is how recently an input may have changed before the probe
// for its answer to be kept: a change within the same tick of the
// kernel's file clock (at most 10 ms) as the probe's read of it would
// leave the same times behind, so such an answer is not kept.
const racyWindow = 50 * time.Millisecond

// probeEntry is one file of the probe cache.
type probeEntry struct {
	Located     string      `json:"located"`
	Interpreter Interpreter `json:"interpreter"`
	Inputs      []fileState `json:"inputs"`
}

// fileState is what of a file's metadata changes when it is written,
// replaced or removed: lstat's, and stat's for a symlink's target.
type fileState struct {
	Path   string   `json:"path"`
	Lstat  statSign `json:"lstat"`
	Target statSign `json:"target"`
}

// statSign is a file's identity and times; the zero value is a file that
// does not exist.
type statSign struct {
	Dev   uint64 `json:"dev,omitempty"`
	Ino   uint64 `json:"ino,omitempty"`
	Mode  uint32 `json:"mode,omitempty"`
	Size  int64  `json:"size,omitempty"`
	Mtime int64  `json:"mtime,omitempty"` // ns
	Ctime int64  `json:"ctime,omitempty"` // ns
}

// signOf is the statSign of a stat's result: zero when it failed.
func signOf(fi fs.FileInfo, err error) statSign {
	if err != nil {
		return statSign{}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return statSign{}
	}
	return statSign{Dev: uint64(st.Dev), Ino: st.Ino, Mode: st.Mode, Size: st.Size,
		Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}
}

// stateOf is the fileState of path now.
func stateOf(path string) fileState {
	s := fileState{Path: path, Lstat: signOf(os.Lstat(path))}
	if s.Lstat.Mode&syscall.S_IFMT == syscall.S_IFLNK {
		s.Target = signOf(os.Stat(path))
	}
	return s
}

// DefaultCacheDir is the folder stratbench keeps what it can make again
// in (the installed bridge, the probe's answers): the user's cache
// folder's stratbench, else home's cache.
func DefaultCacheDir(home string) string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "stratbench")
	}
	return filepath.Join(home, "cache")
}

// probeCacheFile is where the answer for the interpreter at located is
// kept in cacheDir: named by the path, the probe script (a new probe
// asks more) and the dynamic loader's environment, which can change the
// library an interpreter runs without changing a file of it.
func probeCacheFile(cacheDir, located string) string {
	h := sha256.New()
	for _, part := range []string{located, probeScript, os.Getenv("LD_LIBRARY_PATH"), os.Getenv("LD_PRELOAD")} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return filepath.Join(cacheDir, "python", hex.EncodeToString(h.Sum(nil)[:12])+".json")
}

// CachedPython returns what FindPythonCached learnt of the interpreter flag
// names (as FindPython chooses it) when it kept that answer in cacheDir and
// none of the answer's inputs has changed since; ok is false otherwise,
// and FindPythonCached would run the interpreter.
func CachedPython(flag, cacheDir string) (py *Interpreter, ok bool) {
	path, _, err := locatePython(flag)
	if err != nil {
		return nil, false
	}
	return cachedPython(path, cacheDir)
}

func cachedPython(located, cacheDir string) (*Interpreter, bool) {
	b, err := os.ReadFile(probeCacheFile(cacheDir, located))
	if err != nil {
		return nil, false
	}
	var e probeEntry
	if err := json.Unmarshal(b, &e); err != nil || e.Located != located || e.Interpreter.Executable != located {
		return nil, false
	}
	for _, in := range e.Inputs {
		if stateOf(in.Path) != in {
			return nil, false
		}
	}
	py := e.Interpreter
	py.exe = signOf(os.Stat(located))
	return &py, true
}

// FindPythonCached is FindPython answering from cacheDir when it can
// (CachedPython). Otherwise it runs the interpreter, and keeps the answer
// when it can be checked later: the interpreter is its own executable (not
// a launcher, a pyenv shim say, whose choice depends on the environment and
// the current folder) and none of its inputs changed just before the probe.
// A cache that cannot be read or written only costs the probe.
func FindPythonCached(ctx context.Context, flag, cacheDir string) (*Interpreter, error) {
	return findPythonCached(ctx, flag, cacheDir, time.Now)
}

// findPythonCached is FindPythonCached with the clock that dates the probe
// (against racyWindow) given: a test passes one ahead, instead of waiting
// for its fresh files to age.
func findPythonCached(ctx context.Context, flag, cacheDir string, now func() time.Time) (*Interpreter, error) {
	path, origin, err := locatePython(flag)
	if err != nil {
		return nil, err
	}
	if py, ok := cachedPython(path, cacheDir); ok {
		return py, nil
	}
	started := now()
	py, inputs, err := probePython(ctx, path, origin)
	if err != nil {
		return nil, err
	}
	if py.Executable == path && !IsScript(path) {
		_ = keepProbe(cacheDir, path, py, inputs, started)
	}
	return py, nil
}

// errRacy: an input changed too close to the probe for its answer to be
// checked against it later (racyWindow).
var errRacy = errors.New("an input changed just before the probe")

// keepProbe writes the answer py of the probe started at started, with the
// state of its inputs (which include path itself), to cacheDir.
func keepProbe(cacheDir, path string, py *Interpreter, inputs []string, started time.Time) error {
	e := probeEntry{Located: path, Interpreter: *py}
	inputs = append(slices.Clone(inputs), path)
	slices.Sort(inputs)
	limit := started.Add(-racyWindow).UnixNano()
	for _, in := range slices.Compact(inputs) {
		if !filepath.IsAbs(in) {
			continue
		}
		s := stateOf(in)
		for _, sign := range []statSign{s.Lstat, s.Target} {
			if sign.Mtime >= limit || sign.Ctime >= limit {
				return errRacy
			}
		}
		e.Inputs = append(e.Inputs, s)
	}
	file := probeCacheFile(cacheDir, path)
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("keep the probe of %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fmt.Errorf("keep the probe of %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(file, b, 0o644, atomicfile.Volatile); err != nil {
		return fmt.Errorf("keep the probe of %s: %w", path, err)
	}
	return pruneProbes(filepath.Dir(file))
}

// pruneProbes removes the oldest answers beyond maxCachedPythons.
func pruneProbes(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("prune the probe cache: %w", err)
	}
	type aged struct {
		name string
		mod  time.Time
	}
	var files []aged
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() && filepath.Ext(e.Name()) == ".json" {
			files = append(files, aged{e.Name(), info.ModTime()})
		}
	}
	if len(files) <= maxCachedPythons {
		return nil
	}
	slices.SortFunc(files, func(a, b aged) int { return b.mod.Compare(a.mod) })
	var errs []error
	for _, f := range files[maxCachedPythons:] {
		if err := os.Remove(filepath.Join(dir, f.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err) // another stratbench may have removed it
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("prune the probe cache: %w", err)
	}
	return nil
}
