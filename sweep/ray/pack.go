// This file is long because it is the whole of one promise: the package
// that goes to the cluster is deterministic and content-addressed (the same
// inputs give the same bytes and the same name) and never exceeds its
// documented size; listing, naming rules, the size guard and the zip writer
// are the parts of that promise and are read together.

package ray

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxPackageBytes is the largest package Ray 2.60's dashboard accepts in
// one upload: it reads a request body of at most 100 MiB (its HTTP server's
// client_max_size) and answers 413 beyond; TestPackageSizeLimit measures
// both sides of the edge. (The GCS would hold up to 512 MiB, but a package
// reaches it only through the dashboard.) Over it, the data must be read by
// the nodes from a path they share instead of travelling in the package.
const MaxPackageBytes = 100 << 20

// MaxPackageFiles bounds the files of a package, so that a strategy kept in
// a large folder (a home directory) is refused quickly, with its count,
// instead of being walked and zipped.
const MaxPackageFiles = 20000

// The layout of a package, unpacked on each node (read-only) as the shards'
// working directory:
//
//	stratbench               stratbench's binary (mode 0755)
//	strategy/…               the strategy's folder
//	data/NAME[/…]            each data file or folder, under its base name
//	stratbench-package.json  the Manifest (always the last entry)
//
// The top level always holds more than one entry, so Ray, were the package
// a job's working_dir (the package tests use it so), would never strip a
// single top-level folder when it unpacks the zip.
const (
	PackageBinary   = "stratbench"
	PackageStrategy = "strategy"
	PackageData     = "data"
	PackageManifest = "stratbench-package.json"
)

// PackageFormat is the version of the layout and of the Manifest.
const PackageFormat = 1

// excludedDirs are folders never packaged from the strategy's folder or a
// data folder: version control, caches, virtual environments (the node
// runs its own Python). excludedSuffixes are files never packaged.
var (
	excludedDirs     = []string{".git", ".hg", ".svn", "__pycache__", ".venv", ".mypy_cache", ".pytest_cache", ".ipynb_checkpoints"}
	excludedSuffixes = []string{".pyc"}
)

// packageTime is every entry's modification time: fixed, so the same inputs
// always give the same bytes (Ray does not restore it on unpacking).
var packageTime = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// PackageSpec says what goes into a package.
type PackageSpec struct {
	Binary   string   // stratbench's executable (see CheckExecutable)
	Strategy string   // the strategy's folder
	Data     []string // data files or folders to send
	// NodeData are absolute paths of data every node reads in place (a
	// shared filesystem). They are named in the manifest, not sent.
	NodeData []string
}

// Package is a built package: a zip file named after its content.
type Package struct {
	Path     string     // the zip, in the folder given to BuildPackage
	URI      PackageURI // gcs://_ray_pkg_<SHA256>.zip
	SHA256   string     // of the zip's bytes, hex
	Size     int64      // of the zip
	Manifest Manifest
	// Files are every file of the zip with its size and sha256, the
	// manifest included (for a package of BuildPackage; what the node
	// side checks the package against, see PackageCheck).
	Files []Entry
}

// Manifest is stratbench-package.json: what the node side needs to find
// things, and a checksum of each file.
type Manifest struct {
	Format      int      `json:"format"`
	Binary      string   `json:"binary"`
	Interpreter string   `json:"interpreter,omitempty"` // the binary's dynamic loader, if any
	Strategy    string   `json:"strategy"`
	Data        []string `json:"data"`                // package paths of the data sent, in the order given
	NodeData    []string `json:"node_data,omitempty"` // paths read in place on the nodes
	Files       []Entry  `json:"files"`               // every file but the manifest, sorted by path
}

// Entry is one file of a package.
type Entry struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	Exec   bool   `json:"exec,omitempty"`
}

// TooLargeError: the package would be over MaxPackageBytes. Nothing was
// uploaded.
type TooLargeError struct {
	Limit     int64   // the limit (MaxPackageBytes)
	Size      int64   // bytes of the zip when the build stopped (over the limit), or of an upload
	DataBytes int64   // bytes of the data to send, before compression
	Largest   []Entry // the largest files before compression, largest first
}

func (e *TooLargeError) Error() string {
	var b strings.Builder
	limit := e.Limit
	if limit == 0 {
		limit = MaxPackageBytes
	}
	fmt.Fprintf(&b, "ray: the package for the cluster (stratbench's binary, the strategy's folder and the data) is over the %s Ray accepts in one upload",
		mib(limit))
	if e.DataBytes > 0 {
		fmt.Fprintf(&b, "; the data is %s of it before compression", mib(e.DataBytes))
	}
	if len(e.Largest) > 0 {
		b.WriteString("; largest files:")
		for i, f := range e.Largest {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %s %s", f.Path, mib(f.Size))
		}
	}
	b.WriteString(". Put the data at a path every node can read and have the nodes read it there instead of sending it")
	return b.String()
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// source is a file to package.
type source struct {
	name string // path in the package
	from string // path on disk
	size int64  // at listing time
	exec bool
}

// BuildPackage writes the package of spec as a zip in dir and returns it.
// The zip is deterministic: entries sorted by path (the manifest last),
// fixed times and normalised modes (0755 for executables, 0644 otherwise),
// so the same inputs give the same bytes, hence the same URI. A package
// over MaxPackageBytes is a *TooLargeError; a binary the nodes cannot run
// is an *ExecutableError; a file that cannot be packaged (a special file, a
// symlink to a folder, a name Ray would skip) is an error naming it.
func BuildPackage(ctx context.Context, spec PackageSpec, dir string) (*Package, error) {
	return buildPackage(ctx, spec, dir, MaxPackageBytes)
}

// buildPackage is BuildPackage with the size limit as a parameter, so that
// tests can reach it without writing 100 MiB.
func buildPackage(ctx context.Context, spec PackageSpec, dir string, limit int64) (*Package, error) {
	exe, err := CheckExecutable(spec.Binary)
	if err != nil {
		return nil, err
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("ray: package folder: %w", err)
	}
	for _, p := range spec.NodeData {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("ray: node data %q: want an absolute path, the same on every node", p)
		}
	}

	binInfo, err := os.Stat(spec.Binary)
	if err != nil {
		return nil, fmt.Errorf("ray: stratbench's binary: %w", err)
	}
	srcs := []source{{name: PackageBinary, from: spec.Binary, size: binInfo.Size(), exec: true}}
	walker := &lister{ctx: ctx, skip: absDir}
	strategy, err := walker.folder(spec.Strategy, PackageStrategy)
	if err != nil {
		return nil, err
	}
	srcs = append(srcs, strategy...)
	man := Manifest{Format: PackageFormat, Binary: PackageBinary, Interpreter: exe.Interpreter,
		Strategy: PackageStrategy, Data: []string{}, NodeData: spec.NodeData}
	var dataBytes int64
	seen := map[string]string{}
	for _, d := range spec.Data {
		base := filepath.Base(filepath.Clean(d))
		if prev, ok := seen[base]; ok {
			return nil, fmt.Errorf("ray: data %s and %s have the same name %q in the package", prev, d, base)
		}
		seen[base] = d
		name := path.Join(PackageData, base)
		fi, err := os.Stat(d)
		if err != nil {
			return nil, fmt.Errorf("ray: data: %w", err)
		}
		var files []source
		if fi.IsDir() {
			files, err = walker.folder(d, name)
		} else {
			files, err = walker.file(d, name)
		}
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			dataBytes += f.size
		}
		srcs = append(srcs, files...)
		man.Data = append(man.Data, name)
	}
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].name < srcs[j].name })
	for i := 1; i < len(srcs); i++ {
		if srcs[i].name == srcs[i-1].name {
			return nil, fmt.Errorf("ray: two files would be %s in the package", srcs[i].name)
		}
	}
	tooLarge := func(size int64) error {
		largest := make([]source, len(srcs))
		copy(largest, srcs)
		sort.SliceStable(largest, func(i, j int) bool { return largest[i].size > largest[j].size })
		e := &TooLargeError{Limit: limit, Size: size, DataBytes: dataBytes}
		for _, s := range largest[:min(3, len(largest))] {
			e.Largest = append(e.Largest, Entry{Path: s.name, Size: s.size})
		}
		return e
	}

	pw, err := newPackageWriter(absDir, limit)
	if err != nil {
		return nil, err
	}
	defer pw.abort()
	for _, s := range srcs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("ray: package: %w", err)
		}
		e, err := addFile(pw.zw, s)
		if errors.Is(err, errOverLimit) {
			return nil, tooLarge(pw.counted.n)
		}
		if err != nil {
			return nil, err
		}
		man.Files = append(man.Files, e)
	}
	manifest, err := json.MarshalIndent(man, "", " ")
	if err != nil {
		return nil, fmt.Errorf("ray: package manifest: %w", err)
	}
	manifest = append(manifest, '\n')
	manSum := sha256.Sum256(manifest)
	files := append(append([]Entry{}, man.Files...), Entry{Path: PackageManifest, Size: int64(len(manifest)), SHA256: hex.EncodeToString(manSum[:])})
	if err := pw.add(PackageManifest, manifest, false); err != nil {
		if errors.Is(err, errOverLimit) {
			return nil, tooLarge(pw.counted.n)
		}
		return nil, err
	}
	pkg, err := pw.finish()
	if errors.Is(err, errOverLimit) {
		return nil, tooLarge(pw.counted.n)
	}
	if err != nil {
		return nil, err
	}
	pkg.Manifest, pkg.Files = man, files
	return pkg, nil
}

// packageWriter writes a zip into a temporary file of the package folder,
// hashing and counting it on the way (past MaxPackageBytes a write fails
// with errOverLimit), and names it after its hash when finished.
type packageWriter struct {
	dir     string
	tmp     *os.File
	sum     hash.Hash
	counted *limitWriter
	zw      *zip.Writer
}

func newPackageWriter(dir string, limit int64) (*packageWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("ray: package folder: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".package-*.zip")
	if err != nil {
		return nil, fmt.Errorf("ray: package: %w", err)
	}
	pw := &packageWriter{dir: dir, tmp: tmp, sum: sha256.New()}
	pw.counted = &limitWriter{w: io.MultiWriter(tmp, pw.sum), limit: limit}
	pw.zw = zip.NewWriter(pw.counted)
	return pw, nil
}

// add writes an entry held in memory.
func (pw *packageWriter) add(name string, data []byte, exec bool) error {
	w, err := pw.zw.CreateHeader(header(name, exec))
	if err == nil {
		_, err = w.Write(data)
	}
	if err != nil && !errors.Is(err, errOverLimit) {
		return fmt.Errorf("ray: package: writing %s: %w", name, err)
	}
	return err
}

// finish completes the zip and moves it to its final name.
func (pw *packageWriter) finish() (*Package, error) {
	if err := pw.zw.Close(); err != nil {
		if errors.Is(err, errOverLimit) {
			return nil, err
		}
		return nil, fmt.Errorf("ray: package: writing %s: %w", pw.tmp.Name(), err)
	}
	if err := pw.tmp.Close(); err != nil {
		return nil, fmt.Errorf("ray: package: %w", err)
	}
	digest := hexSum(pw.sum)
	name := "_ray_pkg_" + digest + ".zip"
	final := filepath.Join(pw.dir, name)
	if err := os.Rename(pw.tmp.Name(), final); err != nil {
		return nil, fmt.Errorf("ray: package: %w", err)
	}
	pw.tmp = nil
	return &Package{Path: final, URI: PackageURI("gcs://" + name), SHA256: digest, Size: pw.counted.n}, nil
}

// abort removes the temporary file of an unfinished package.
func (pw *packageWriter) abort() {
	if pw.tmp != nil {
		pw.tmp.Close()
		os.Remove(pw.tmp.Name())
		pw.tmp = nil
	}
}

func header(name string, exec bool) *zip.FileHeader {
	h := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: packageTime}
	if exec {
		h.SetMode(0o755)
	} else {
		h.SetMode(0o644)
	}
	return h
}

// addFile copies one file into the zip, hashing it on the way. The size
// and checksum are those of the bytes copied, whatever the file did since
// it was listed.
func addFile(zw *zip.Writer, s source) (Entry, error) {
	f, err := os.Open(s.from)
	if err != nil {
		return Entry{}, fmt.Errorf("ray: package: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Entry{}, fmt.Errorf("ray: package: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return Entry{}, fmt.Errorf("ray: package: %s is no longer a regular file", s.from)
	}
	w, err := zw.CreateHeader(header(s.name, s.exec))
	if err != nil {
		return Entry{}, wrapZip(err, s)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), f)
	if err != nil {
		return Entry{}, wrapZip(err, s)
	}
	return Entry{Path: s.name, Size: n, SHA256: hexSum(h), Exec: s.exec}, nil
}

func wrapZip(err error, s source) error {
	if errors.Is(err, errOverLimit) {
		return err
	}
	return fmt.Errorf("ray: package: adding %s: %w", s.from, err)
}

func hexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

var errOverLimit = errors.New("package over the size limit")

// limitWriter counts what goes through it and fails past limit.
type limitWriter struct {
	w     io.Writer
	n     int64
	limit int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n+int64(len(p)) > l.limit {
		l.n += int64(len(p))
		return 0, errOverLimit
	}
	n, err := l.w.Write(p)
	l.n += int64(n)
	return n, err
}

// lister lists the files of the strategy's folder and of the data.
type lister struct {
	ctx   context.Context
	skip  string // the folder packages are written to, never listed
	count int
}

func (l *lister) add(srcs []source, s source) ([]source, error) {
	l.count++
	if l.count > MaxPackageFiles {
		return nil, fmt.Errorf("ray: package: more than %d files (at %s); keep the strategy in a folder of its own", MaxPackageFiles, s.from)
	}
	if err := checkName(s.name, s.from); err != nil {
		return nil, err
	}
	return append(srcs, s), nil
}

// file lists a single data file (following a symlink to it).
func (l *lister) file(from, name string) ([]source, error) {
	fi, err := os.Stat(from)
	if err != nil {
		return nil, fmt.Errorf("ray: package: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("ray: package: %s is not a regular file", from)
	}
	return l.add(nil, source{name: name, from: from, size: fi.Size(), exec: fi.Mode()&0o111 != 0})
}

// folder lists the files under root, as name/REL. Excluded folders and
// files are left out; a symlink to a file is followed (its content is
// packaged); a symlink to a folder, a dangling symlink or a special file
// is an error naming it.
func (l *lister) folder(root, name string) ([]source, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("ray: package: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("ray: package: %s is not a folder", root)
	}
	var srcs []source
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("ray: package: %w", err)
		}
		if err := l.ctx.Err(); err != nil {
			return fmt.Errorf("ray: package: %w", err)
		}
		if abs, _ := filepath.Abs(p); abs == l.skip {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return fmt.Errorf("ray: package: %w", err)
		}
		if d.IsDir() {
			if p != root && excluded(d.Name(), excludedDirs) {
				return filepath.SkipDir
			}
			return nil
		}
		if hasSuffix(d.Name(), excludedSuffixes) {
			return nil
		}
		mode := d.Type()
		if mode&fs.ModeSymlink != 0 {
			target, err := os.Stat(p)
			switch {
			case err != nil:
				return fmt.Errorf("ray: package: %s is a dangling symlink: %w", p, err)
			case target.IsDir():
				return fmt.Errorf("ray: package: %s is a symlink to a folder, which is not packaged; copy the folder or move it out", p)
			case !target.Mode().IsRegular():
				return fmt.Errorf("ray: package: %s links to a special file, which is not packaged", p)
			}
			srcs, err = l.add(srcs, source{name: path.Join(name, filepath.ToSlash(rel)), from: p, size: target.Size(), exec: target.Mode()&0o111 != 0})
			return err
		}
		if !mode.IsRegular() {
			return fmt.Errorf("ray: package: %s is a special file (%s), which is not packaged", p, mode.Type())
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("ray: package: %w", err)
		}
		srcs, err = l.add(srcs, source{name: path.Join(name, filepath.ToSlash(rel)), from: p, size: info.Size(), exec: info.Mode()&0o111 != 0})
		return err
	})
	if err != nil {
		return nil, err
	}
	return srcs, nil
}

// checkName refuses names that Ray's unpacking would skip or mangle: a
// backslash (Ray skips the entry as unsafe) or bytes that are not UTF-8.
func checkName(name, from string) error {
	if !utf8.ValidString(name) {
		return fmt.Errorf("ray: package: %q: the name is not UTF-8", from)
	}
	if strings.ContainsRune(name, '\\') {
		return fmt.Errorf("ray: package: %s: a backslash in the name (Ray would skip the file)", from)
	}
	return nil
}

func excluded(name string, list []string) bool {
	for _, x := range list {
		if name == x {
			return true
		}
	}
	return false
}

func hasSuffix(name string, list []string) bool {
	for _, x := range list {
		if strings.HasSuffix(name, x) {
			return true
		}
	}
	return false
}
