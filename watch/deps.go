package watch

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Bounds of the module scan: a strategy kept in a large folder (a home
// folder, a monorepo) must not make every save read thousands of files.
const (
	maxModules     = 256 // module files hashed besides the strategy
	maxModuleDepth = 4   // package folders below the strategy's folder
)

// part is one file a state is made of: its name as the user knows it and
// the digest of its state.
type part struct {
	name   string
	digest [32]byte
}

// deps are the files a run reads besides the strategy: the Python modules
// next to it (Options.Modules) and the inputs (Options.Inputs, the data).
type deps struct {
	strategy string // the strategy file, which is not a module of itself
	root     string // the strategy's folder
	modules  bool
	inputs   []input
}

// input is one file or folder of Options.Inputs.
type input struct {
	path string // absolute, cleaned
	name string // as the user gave it
}

func newDeps(strategy string, opts Options) (*deps, error) {
	d := &deps{strategy: strategy, root: filepath.Dir(strategy), modules: opts.Modules}
	for _, in := range opts.Inputs {
		if in == "" {
			continue
		}
		abs, err := filepath.Abs(in)
		if err != nil {
			return nil, fmt.Errorf("watch %s: %w", in, err)
		}
		d.inputs = append(d.inputs, input{path: filepath.Clean(abs), name: in})
	}
	return d, nil
}

// none reports whether nothing besides the strategy is watched.
func (d *deps) none() bool { return !d.modules && len(d.inputs) == 0 }

// moduleFiles lists the Python files the strategy may import from its
// folder: the folder's .py files and those of the packages below it
// (folders with an __init__.py), sorted, at most maxModules. dirs are the
// folders they were found in, the strategy's folder first.
func (d *deps) moduleFiles() (files, dirs []string) {
	if !d.modules {
		return nil, nil
	}
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		dirs = append(dirs, dir)
		for _, e := range entries {
			name := e.Name()
			if len(files) >= maxModules {
				return
			}
			full := filepath.Join(dir, name)
			switch {
			case strings.HasPrefix(name, "."):
			case e.Type().IsRegular() && strings.HasSuffix(name, ".py") && full != d.strategy:
				files = append(files, full)
			case e.IsDir() && depth < maxModuleDepth && name != "__pycache__" && isPackage(full):
				walk(full, depth+1)
			}
		}
	}
	walk(d.root, 0)
	slices.Sort(files)
	return files, dirs
}

// isPackage reports whether dir is a regular Python package.
func isPackage(dir string) bool {
	info, err := os.Stat(filepath.Join(dir, "__init__.py"))
	return err == nil && info.Mode().IsRegular()
}

// inputDirs are the folders whose events concern the inputs: an input
// folder itself, or a file's folder.
func (d *deps) inputDirs() []string {
	var dirs []string
	for _, in := range d.inputs {
		if info, err := os.Stat(in.path); err == nil && info.IsDir() {
			dirs = append(dirs, in.path)
			continue
		}
		dirs = append(dirs, filepath.Dir(in.path))
	}
	return dirs
}

// concerns reports whether an event on name may change a dependency.
func (d *deps) concerns(name string, moduleDirs map[string]bool) bool {
	dir := filepath.Dir(name)
	if strings.HasPrefix(filepath.Base(name), ".") {
		// Editors' lock, swap and temporary files (Emacs's .#strategy.py):
		// no module, no folder input's entry is a hidden name.
		return d.isInput(name)
	}
	if d.modules && (moduleDirs[dir] || moduleDirs[name]) {
		base := filepath.Base(name)
		if strings.HasSuffix(base, ".py") || moduleDirs[name] {
			return true
		}
		if info, err := os.Stat(name); err == nil && info.IsDir() {
			return true // a new package, perhaps
		}
	}
	for _, in := range d.inputs {
		if name == in.path || dir == in.path {
			return true
		}
	}
	return false
}

// isInput reports whether name is one of the inputs itself.
func (d *deps) isInput(name string) bool {
	for _, in := range d.inputs {
		if name == in.path {
			return true
		}
	}
	return false
}

// parts reads the state of every dependency: modules by content, inputs by
// content up to MaxFileSize and by size and modification time beyond (a
// data file of gigabytes is not read on every save); a folder input by its
// entries' names, sizes and times.
func (d *deps) parts() []part {
	files, _ := d.moduleFiles()
	out := make([]part, 0, len(files)+len(d.inputs))
	for _, f := range files {
		rel, err := filepath.Rel(d.root, f)
		if err != nil {
			rel = f
		}
		out = append(out, part{name: rel, digest: contentDigest(f)})
	}
	for _, in := range d.inputs {
		out = append(out, part{name: in.name, digest: inputDigest(in.path)})
	}
	return out
}

// contentDigest is a file's SHA-256, or a digest of the problem that kept
// it from being read (so that a file appearing or going is a change).
func contentDigest(path string) [32]byte {
	sum, err := hashFile(path)
	if err != nil {
		return problemDigest(err)
	}
	return sum
}

func problemDigest(err error) [32]byte {
	if errors.Is(err, fs.ErrNotExist) {
		return sha256.Sum256([]byte("missing"))
	}
	return sha256.Sum256([]byte("error " + err.Error()))
}

func inputDigest(path string) [32]byte {
	info, err := os.Stat(path)
	switch {
	case err != nil:
		return problemDigest(err)
	case info.IsDir():
		entries, err := os.ReadDir(path)
		if err != nil {
			return problemDigest(err)
		}
		h := sha256.New()
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue // editors' temporary files
			}
			st := statFile(filepath.Join(path, e.Name()))
			fmt.Fprintf(h, "%s %d %d\n", e.Name(), st.size, st.modTime)
		}
		var sum [32]byte
		h.Sum(sum[:0])
		return sum
	case info.Size() <= MaxFileSize:
		return contentDigest(path)
	}
	return sha256.Sum256(fmt.Appendf(nil, "stat %d %d", info.Size(), info.ModTime().UnixNano()))
}

// digestOf combines parts into one digest; zero for none.
func digestOf(parts []part) [32]byte {
	var sum [32]byte
	if len(parts) == 0 {
		return sum
	}
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%s\x00%x\n", p.name, p.digest)
	}
	h.Sum(sum[:0])
	return sum
}

// firstDifference names the first part of now that is not in before as it
// is, or the first part of before that is gone; "" when none differs.
func firstDifference(before, now []part) string {
	old := make(map[string][32]byte, len(before))
	for _, p := range before {
		old[p.name] = p.digest
	}
	for _, p := range now {
		if d, ok := old[p.name]; !ok || d != p.digest {
			return p.name
		}
		delete(old, p.name)
	}
	for _, p := range before {
		if _, ok := old[p.name]; ok {
			return p.name
		}
	}
	return ""
}

// signature is what a poll compares for the dependencies: their names,
// sizes and modification times.
func (d *deps) signature() string {
	if d.none() {
		return ""
	}
	var b strings.Builder
	files, _ := d.moduleFiles()
	for _, f := range files {
		st := statFile(f)
		fmt.Fprintf(&b, "%s %d %d\n", f, st.size, st.modTime)
	}
	for _, in := range d.inputs {
		st := statFile(in.path)
		fmt.Fprintf(&b, "%s %v %d %d\n", in.path, st.exists, st.size, st.modTime)
		if info, err := os.Stat(in.path); err == nil && info.IsDir() {
			fmt.Fprintf(&b, "%x\n", inputDigest(in.path))
		}
	}
	return b.String()
}
