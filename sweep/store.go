package sweep

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/internal/nofollow"
	"stratbench/internal/termtext"
)

// File names in a sweep's folder.
const (
	DocumentFile = "sweep.json"
	ResultsFile  = "results.jsonl"
)

// IDPrefix starts every sweep id, so that a sweep id is never taken for
// a job id (which starts with a digit) or a prefix of one.
const IDPrefix = "sw-"

// ErrUnknownSweep is returned for a sweep id that has no sweep folder.
var ErrUnknownSweep = errors.New("unknown sweep")

// ErrBusy is returned by OpenResults for a sweep that another process
// (or another Results) has open: a sweep that is running.
var ErrBusy = errors.New("the sweep is running (its results are open in another stratbench)")

// DocumentError is a sweep folder's sweep.json that cannot be read as a
// sweep document: cut short (a disk that filled, a copy interrupted) or
// edited by hand. Its sweep can be neither shown nor resumed.
type DocumentError struct {
	ID   string // the sweep's id: its folder's name
	Path string // the sweep.json
	Err  error  // what is wrong with it
}

func (e *DocumentError) Error() string {
	return fmt.Sprintf("sweep %s: %s is not a readable sweep document (%v)", e.ID, e.Path, e.Err)
}

func (e *DocumentError) Unwrap() error { return e.Err }

// ErrDuplicateResult is returned by Append for a (fold, phase, index)
// that already has a result.
var ErrDuplicateResult = errors.New("duplicate result")

// NewID returns a new sweep id for a sweep started at t: "sw-", the UTC
// time to the millisecond and 4 random hex digits, as in
// sw-20260105-093000.123-1a2b. Ids sort by start time and are safe in file
// names.
func NewID(t time.Time) string {
	var b [2]byte
	rand.Read(b[:])
	return IDPrefix + t.UTC().Format("20060102-150405.000") + "-" + hex.EncodeToString(b[:])
}

// IsID reports whether s has the form of a sweep id (or of a prefix of
// one long enough to tell it from a job id: it starts with "sw-") and
// holds only characters safe in a file name.
func IsID(s string) bool {
	if !strings.HasPrefix(s, IDPrefix) || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '.' || r == '_') {
			return false
		}
	}
	return true
}

// Store is the sweeps folder, $STRATBENCH_HOME/sweeps: one folder per
// sweep, named by its id, holding sweep.json and results.jsonl.
//
// Nothing a sweep folder holds is trusted to name a path: a sweep is the
// folder sweeps/ID (ID of the sweep id form, IsID), reached from the sweeps
// folder's descriptor without following a symbolic link (nofollow), and its
// document is its sweep.json only when the sweep_id it records is ID
// (*DocumentError otherwise). sweeps/ itself must be a folder, not a link.
type Store struct{ dir string }

// OpenStore opens (and creates) the sweeps folder under home. A sweeps
// folder that is a symbolic link is refused: stratbench follows no link
// inside its home.
func OpenStore(home string) (*Store, error) {
	if home == "" {
		return nil, errors.New("open sweep store: no STRATBENCH_HOME")
	}
	dir := filepath.Join(home, "sweeps")
	if err := os.MkdirAll(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("open sweep store: %w", err)
	}
	s := &Store{dir: dir}
	d, err := s.open()
	if err != nil {
		return nil, fmt.Errorf("open sweep store: %w", err)
	}
	d.Close()
	return s, nil
}

// open opens the sweeps folder without following a link.
func (s *Store) open() (*nofollow.Dir, error) {
	d, err := nofollow.Open(s.dir)
	if errors.Is(err, nofollow.ErrSymlink) {
		return nil, fmt.Errorf("%s is a symbolic link: stratbench follows no link inside its home "+
			"(set STRATBENCH_HOME to the folder where the sweeps should be instead)", s.dir)
	}
	return d, err
}

// openSweep opens the folder of sweep id, never through a link; a link
// or a file there is an unknown sweep.
func (s *Store) openSweep(id string) (*nofollow.Dir, error) {
	if !IsID(id) {
		return nil, fmt.Errorf("%w %q", ErrUnknownSweep, id)
	}
	sweeps, err := s.open()
	if err != nil {
		return nil, fmt.Errorf("sweep %s: %w", id, err)
	}
	defer sweeps.Close()
	d, err := sweeps.Sub(id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w %q (see `stratbench sweeps`)", ErrUnknownSweep, id)
	}
	if errors.Is(err, nofollow.ErrSymlink) || errors.Is(err, syscall.ENOTDIR) {
		return nil, fmt.Errorf("%w %q: %s is not a sweep folder (%v)", ErrUnknownSweep, id, s.Dir(id), err)
	}
	if err != nil {
		return nil, fmt.Errorf("sweep %s: %w", id, err)
	}
	return d, nil
}

// Remove removes the folder of sweep id and everything in it, from the
// sweeps folder's descriptor and without following a link
// (nofollow.RemoveAll): nothing outside sweeps/id is removed. It is the
// caller's to decide that the sweep may go (prune: not running).
func (s *Store) Remove(id string) error {
	if !IsID(id) {
		return fmt.Errorf("%w %q", ErrUnknownSweep, id)
	}
	sweeps, err := s.open()
	if err != nil {
		return fmt.Errorf("remove sweep %s: %w", id, err)
	}
	defer sweeps.Close()
	if err := sweeps.RemoveAll(id); err != nil {
		return fmt.Errorf("remove sweep %s: %w", id, err)
	}
	return nil
}

// Dir returns the folder of sweep id.
func (s *Store) Dir(id string) string { return filepath.Join(s.dir, id) }

// creatingPrefix names a sweep folder while Create makes it: hidden, and
// never a sweep id, so that no listing, status or resume sees a sweep
// before it has its sweep.json.
const creatingPrefix = ".creating-"

// Create makes the folder of a new sweep started at doc.StartedAt (now,
// when zero), sets doc.SweepID, writes sweep.json and opens results.jsonl
// as OpenResults does (locked: the sweep runs until the Results close).
// The folder is made under a hidden name and renamed to the sweep's id
// once it holds both: a sweep folder never lacks its sweep.json, and no
// other stratbench can open the new sweep's results before the caller
// has them. A folder that exists already is never reused. A crash before
// the rename leaves only the hidden folder, which RemoveAbandoned removes.
func (s *Store) Create(doc *Document) (*Results, error) {
	if doc.StartedAt.IsZero() {
		doc.StartedAt = time.Now().UTC()
	}
	tmp, err := os.MkdirTemp(s.dir, creatingPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("create sweep folder: %w", err)
	}
	res, err := s.create(doc, tmp)
	if err != nil {
		os.RemoveAll(tmp) // after a rename, nothing of it is left there
		return nil, fmt.Errorf("create sweep folder: %w", err)
	}
	return res, nil
}

func (s *Store) create(doc *Document, tmp string) (*Results, error) {
	// MkdirTemp makes the folder 0700; a sweep folder is 0755 like a job's.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	res, _, err := openResults(filepath.Join(tmp, ResultsFile))
	if err != nil {
		return nil, err
	}
	for range 8 {
		id := NewID(doc.StartedAt)
		doc.SweepID = id
		if err = s.write(doc, tmp); err != nil {
			break
		}
		err = renameNoReplace(tmp, s.Dir(id))
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			break
		}
		// The descriptor (and its lock) moved with the folder.
		res.path = filepath.Join(s.Dir(id), ResultsFile)
		if err := syncDir(s.dir); err != nil {
			res.Close()
			os.RemoveAll(s.Dir(id))
			return nil, err
		}
		return res, nil
	}
	res.Close()
	return nil, err
}

// renameNoReplace renames the folder from to the name to, which must not
// exist: renameat2's RENAME_NOREPLACE makes the test and the rename one
// step. Where the file system does not support the flag (EINVAL), the
// kernel lacks renameat2 (ENOSYS) or a seccomp filter refuses it (EPERM,
// as older container profiles do), an exclusive mkdir claims the name and
// rename(2) replaces the empty folder it made (a folder may be renamed
// over an empty one, atomically).
func renameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EPERM) {
		if err != nil {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
		}
		return nil
	}
	if err := os.Mkdir(to, 0o755); err != nil {
		return err
	}
	if err := os.Rename(from, to); err != nil {
		os.Remove(to)
		return err
	}
	return nil
}

// abandonedAfter is how long a folder Create makes may lie without its
// results locked before RemoveAbandoned takes it for a crashed Create's:
// Create locks them a moment after it makes the folder.
const abandonedAfter = time.Minute

// RemoveAbandoned removes the folders a Create that crashed left behind
// (never one a running Create is making), of those last changed before
// cutoff, and returns how many it removed: hidden folders whose results
// nothing holds, and empty folders under a sweep's id, which the
// mkdir-and-rename fallback of renameNoReplace leaves when it dies between
// its two steps.
func (s *Store) RemoveAbandoned(cutoff time.Time) (int, error) {
	sweeps, err := s.open()
	if err != nil {
		return 0, fmt.Errorf("list sweeps: %w", err)
	}
	defer sweeps.Close()
	entries, err := sweeps.Entries()
	if err != nil {
		return 0, fmt.Errorf("list sweeps: %w", err)
	}
	cutoff = minTime(cutoff, time.Now().Add(-abandonedAfter))
	removed := 0
	for _, e := range entries {
		hidden := strings.HasPrefix(e.Name(), creatingPrefix)
		if !e.Type().IsDir() || !hidden && !IsID(e.Name()) {
			continue
		}
		info, err := sweeps.Lstat(e.Name())
		if err != nil || !info.IsDir() || !info.ModTime().Before(cutoff) {
			continue // gone, or perhaps still being made
		}
		if hidden {
			if locked, err := sweepLocked(sweeps, e.Name()); err != nil || locked {
				continue
			}
			if err := sweeps.RemoveAll(e.Name()); err != nil {
				return removed, fmt.Errorf("remove %s: %w", sweeps.Join(e.Name()), err)
			}
		} else if !isEmptyDir(sweeps, e.Name()) || sweeps.Remove(e.Name()) != nil {
			// A sweep's folder (it has its files) stays. rmdir(2) would
			// refuse it too, but a read-only or another user's home
			// refuses before it looks (EROFS, EACCES, EPERM): prune
			// says nothing of a folder it need not remove. Should a
			// file land in between, rmdir refuses (ENOTEMPTY): also
			// kept.
			continue
		}
		removed++
	}
	return removed, nil
}

// sweepLocked reports whether the results of the sweep folder name in
// sweeps are open for appending (resultsLocked); false when the folder or
// its results do not exist.
func sweepLocked(sweeps *nofollow.Dir, name string) (bool, error) {
	d, err := sweeps.Sub(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer d.Close()
	return resultsLocked(d)
}

// isEmptyDir reports whether name in sweeps is a folder with nothing in it.
func isEmptyDir(sweeps *nofollow.Dir, name string) bool {
	d, err := sweeps.Sub(name)
	if err != nil {
		return false
	}
	defer d.Close()
	entries, err := d.Entries()
	return err == nil && len(entries) == 0
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// Save writes doc as its sweep's sweep.json, atomically: through a
// temporary file in the same folder, synced, then renamed over the old
// one, so a reader or a crash sees the old document or the new one.
func (s *Store) Save(doc *Document) error {
	if !IsID(doc.SweepID) {
		return fmt.Errorf("save sweep: %w %q", ErrUnknownSweep, doc.SweepID)
	}
	return s.write(doc, s.Dir(doc.SweepID))
}

// write writes doc as sweep.json in dir.
func (s *Store) write(doc *Document, dir string) error {
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("save sweep %s: %w", doc.SweepID, err)
	}
	return writeFileAtomic(filepath.Join(dir, DocumentFile), append(data, '\n'))
}

// writeFileAtomic writes data as path through a temporary file, fsync and
// rename, and syncs the folder so the rename itself survives a crash.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after the rename: nothing to remove
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o644) // whatever the umask: readable like job.json
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
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

// Load reads the sweep document of sweep id. A sweep.json that is not a
// sweep document, or another sweep's (its sweep_id is not the folder's),
// is a *DocumentError.
func (s *Store) Load(id string) (*Document, error) {
	dir, err := s.openSweep(id)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	path := dir.Join(DocumentFile)
	data, err := dir.ReadFile(DocumentFile, maxDocumentFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w %q (see `stratbench sweeps`)", ErrUnknownSweep, id)
	}
	if errors.Is(err, nofollow.ErrSymlink) || errors.Is(err, nofollow.ErrNotRegular) || errors.Is(err, nofollow.ErrTooLarge) {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is the DocumentError's
		}
		return nil, &DocumentError{ID: id, Path: path, Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("load sweep %s: %w", id, err)
	}
	var doc Document
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, &DocumentError{ID: id, Path: path, Err: err}
	}
	if doc.SweepID != id {
		// Valid JSON that is not this sweep's document ({} or a copy of
		// another's): a resume would save it under another id.
		return nil, &DocumentError{ID: id, Path: path, Err: fmt.Errorf("its sweep_id is %s, not its folder's name", termtext.Quoted(doc.SweepID, 64))}
	}
	// A running sweep rewrites sweep.json at most every DefaultSaveEvery,
	// and one that crashed (killed outright, its output's pipe closed)
	// never finished it: its counts, best and runs are those of
	// results.jsonl, which has every result the moment it ends (and
	// never fewer than the document counts).
	if doc.Status == StatusRunning {
		if f, err := dir.Open(ResultsFile); err == nil {
			rb, err := scanResults(f, f.Name())
			f.Close()
			if err == nil && int64(len(rb.Results)) > doc.Counts.Done {
				doc.Retally(rb.Results)
			}
		}
	}
	return &doc, nil
}

// maxDocumentFile bounds what is read of a sweep.json: a sweep of a
// million runs writes about 500 MiB; a larger one is not a document
// stratbench wrote.
const maxDocumentFile = 1 << 30

// IDs returns the ids of the sweeps in the store, newest first: the names
// of the folders in sweeps/ that have the sweep id form (links and other
// files are no sweeps).
func (s *Store) IDs() ([]string, error) {
	sweeps, err := s.open()
	if err != nil {
		return nil, fmt.Errorf("list sweeps: %w", err)
	}
	defer sweeps.Close()
	entries, err := sweeps.Entries()
	if err != nil {
		return nil, fmt.Errorf("list sweeps: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if e.Type().IsDir() && IsID(e.Name()) {
			ids = append(ids, e.Name())
		}
	}
	slices.Sort(ids)
	slices.Reverse(ids)
	return ids, nil
}

// List returns every sweep's document, newest first, and the sweeps
// whose sweep.json cannot be read as one (DocumentError), for the caller
// to tell the user of: left out silently, a sweep would seem gone. A
// folder without a sweep.json (the empty folder that the fallback of a
// creation killed in its rename leaves, which prune removes) is no sweep.
func (s *Store) List() (docs []*Document, unreadable []*DocumentError, err error) {
	ids, err := s.IDs()
	if err != nil {
		return nil, nil, err
	}
	docs = make([]*Document, 0, len(ids))
	for _, id := range ids {
		d, err := s.Load(id)
		var de *DocumentError
		switch {
		case err == nil:
			docs = append(docs, d)
		case errors.As(err, &de):
			unreadable = append(unreadable, de)
		}
	}
	return docs, unreadable, nil
}

// Resolve returns the sweep id that ref names: the id itself or a prefix
// (starting with "sw-") of exactly one. An ambiguous prefix is a
// *UsageError listing the candidates.
func (s *Store) Resolve(ref string) (string, error) {
	if !IsID(ref) {
		return "", fmt.Errorf("%w %q: sweep ids start with %q", ErrUnknownSweep, ref, IDPrefix)
	}
	ids, err := s.IDs()
	if err != nil {
		return "", err
	}
	var matches []string
	for _, id := range ids {
		if id == ref {
			return id, nil
		}
		if strings.HasPrefix(id, ref) {
			matches = append(matches, id)
		}
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("%w %q (see `stratbench sweeps`)", ErrUnknownSweep, ref)
	case 1:
		return matches[0], nil
	}
	return "", usage("sweep id", ref, "ambiguous: it starts "+strings.Join(matches, ", "))
}

// ReadBack is what a sweep's results.jsonl holds: for --resume and status.
type ReadBack struct {
	// Results are the complete lines, in file order.
	Results []Result

	// Dropped is the number of bytes of an incomplete last line (a run
	// whose line a crash cut short; that run has no result and runs
	// again); 0 when the file ends with a complete line.
	Dropped int64

	// Note says what was dropped, for the user; empty when nothing was.
	Note string

	// size is the length of the complete lines.
	size int64
}

// Done returns the set of (fold, phase, index) that have a result, for
// --resume to skip: Contains answers in constant time.
func (rb *ReadBack) Done() DoneSet {
	set := DoneSet{keys: make(map[resultKey]struct{}, len(rb.Results))}
	for i := range rb.Results {
		set.keys[rb.Results[i].key()] = struct{}{}
	}
	return set
}

// DoneSet is the runs that have a result.
type DoneSet struct{ keys map[resultKey]struct{} }

// Contains reports whether (fold, phase, index) has a result; fold is
// nil for a plain sweep's run.
func (d DoneSet) Contains(fold *int, phase Phase, index int64) bool {
	r := Result{Fold: fold, Phase: phase, Index: index}
	_, ok := d.keys[r.key()]
	return ok
}

// maxLine is the longest results line read back: a line holds a run's
// params and metrics, a few KiB.
const maxLine = 16 << 20

// ReadResults reads a results.jsonl. A last line without its newline is a
// line a crash cut short: it is left out and noted in the ReadBack. Any
// other bad line, and a (fold, phase, index) that repeats, is an error
// naming the file and line.
func ReadResults(path string) (*ReadBack, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &ReadBack{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	defer f.Close()
	return scanResults(f, path)
}

func scanResults(r io.Reader, path string) (*ReadBack, error) {
	rb := &ReadBack{}
	seen := map[resultKey]int{}
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for lineNo := 1; ; lineNo++ {
		line = line[:0]
		for {
			chunk, err := br.ReadSlice('\n')
			line = append(line, chunk...)
			if err == bufio.ErrBufferFull && len(line) <= maxLine {
				continue
			}
			if err == io.EOF {
				if len(line) > 0 {
					rb.Dropped = int64(len(line))
					rb.Note = fmt.Sprintf("%s: left out an incomplete last line (%d bytes): a run cut short by a crash, which runs again", path, len(line))
				}
				return rb, nil
			}
			if err != nil && err != bufio.ErrBufferFull {
				return nil, fmt.Errorf("read %s: %w", path, err)
			}
			break
		}
		if len(line) > maxLine {
			return nil, fmt.Errorf("%s line %d: longer than %d bytes", path, lineNo, maxLine)
		}
		var res Result
		if err := json.Unmarshal(bytes.TrimSpace(line), &res); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, lineNo, err)
		}
		k := res.key()
		if first, dup := seen[k]; dup {
			return nil, fmt.Errorf("%s line %d: %s already has a result on line %d", path, lineNo, k, first)
		}
		seen[k] = lineNo
		rb.Results = append(rb.Results, res)
		rb.size += int64(len(line))
	}
}

// Running reports whether sweep id's results are open for appending
// (OpenResults), in this process or another: whether the sweep is running, whatever its
// sweep.json says (a stratbench that died leaves "running" behind).
func (s *Store) Running(id string) (bool, error) {
	dir, err := s.openSweep(id)
	if err != nil {
		return false, err
	}
	defer dir.Close()
	locked, err := resultsLocked(dir)
	if err != nil {
		return false, fmt.Errorf("look at sweep %s: %w", id, err)
	}
	return locked, nil
}

// resultsLocked reports whether the results file of the sweep folder dir
// is open for appending (locked); false when it does not exist.
func resultsLocked(dir *nofollow.Dir) (bool, error) {
	f, err := dir.Open(ResultsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	// F_OFD_GETLK only asks: taking even a shared lock for a moment could
	// make a resume starting at that moment find the sweep busy.
	lk := wholeFileLock(unix.F_WRLCK)
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, lk); err != nil {
		return false, err
	}
	return lk.Type != unix.F_UNLCK, nil
}

// wholeFileLock describes a lock of type typ over the whole file (pid 0,
// as open file description locks require).
func wholeFileLock(typ int16) *unix.Flock_t {
	return &unix.Flock_t{Type: typ, Whence: io.SeekStart, Start: 0, Len: 0}
}

// Results is a sweep's results.jsonl open for appending. It is safe for
// concurrent use by the sweep's runs.
type Results struct {
	mu   sync.Mutex
	f    *os.File
	path string
	size int64 // the length of the complete lines
	keys map[resultKey]struct{}
}

// OpenResults opens sweep id's results.jsonl for appending, creating it,
// and reads back what it holds. It holds an exclusive lock on the file
// until Close: a second OpenResults of the sweep, here or in another
// process, fails with ErrBusy. An incomplete last line left by a crash
// is cut off the file (and noted in the ReadBack), so that the next line
// starts on a line of its own.
func (s *Store) OpenResults(id string) (*Results, *ReadBack, error) {
	dir, err := s.openSweep(id)
	if err != nil {
		return nil, nil, err
	}
	defer dir.Close()
	f, err := dir.OpenFile(ResultsFile, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("open results: %w", err)
	}
	res, rb, err := lockResults(f)
	if errors.Is(err, ErrBusy) {
		return nil, nil, fmt.Errorf("open results of sweep %s: %w", id, err)
	}
	return res, rb, err
}

// openResults opens (creating) and locks the results file at path and
// reads back what it holds: OpenResults, for the folder Create makes.
func openResults(path string) (*Results, *ReadBack, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("open results: %w", err)
	}
	return lockResults(f)
}

// lockResults locks the results file f and reads back what it holds; it
// closes f on an error.
func lockResults(f *os.File) (*Results, *ReadBack, error) {
	path := f.Name()
	// The lock is the kernel's record that the sweep runs: an open file
	// description lock, it goes with the descriptor, also when the
	// process dies, and Running can test for it without taking it.
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, wholeFileLock(unix.F_WRLCK)); err != nil {
		f.Close()
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
			return nil, nil, ErrBusy
		}
		return nil, nil, fmt.Errorf("lock %s: %w", path, err)
	}
	rb, err := scanResults(f, path)
	if err == nil && rb.Dropped > 0 {
		if err = f.Truncate(rb.size); err == nil {
			err = f.Sync()
		}
		if err != nil {
			err = fmt.Errorf("cut the incomplete last line of %s: %w", path, err)
		}
	}
	if err == nil {
		_, err = f.Seek(rb.size, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	res := &Results{f: f, path: path, size: rb.size, keys: make(map[resultKey]struct{}, len(rb.Results))}
	for i := range rb.Results {
		res.keys[rb.Results[i].key()] = struct{}{}
	}
	return res, rb, nil
}

// Append writes r as one line and syncs it to the disk before it
// returns: a sweep killed in any way keeps every line Append returned
// for. A line is written whole or not at all: when the write fails
// part-way (a full disk), the file is cut back to where it was. A
// (fold, phase, index) that has a result already is refused with
// ErrDuplicateResult and nothing is written.
func (r *Results) Append(res Result) error {
	if err := res.check(); err != nil {
		return fmt.Errorf("append to %s: %w", r.path, err)
	}
	line, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("append to %s: %w", r.path, err)
	}
	line = append(line, '\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return fmt.Errorf("append to %s: %w", r.path, os.ErrClosed)
	}
	k := res.key()
	if _, dup := r.keys[k]; dup {
		return fmt.Errorf("append to %s: %w: %s", r.path, ErrDuplicateResult, k)
	}
	// WriteAt the known end, not O_APPEND: after a failed write the end
	// is where the last whole line ends.
	_, err = r.f.WriteAt(line, r.size)
	if err == nil {
		err = r.f.Sync()
	}
	if err != nil {
		if terr := r.f.Truncate(r.size); terr != nil {
			return fmt.Errorf("append to %s: %w (and cutting the partial line off failed: %v)", r.path, err, terr)
		}
		return fmt.Errorf("append to %s: %w", r.path, err)
	}
	r.size += int64(len(line))
	r.keys[k] = struct{}{}
	return nil
}

// Close closes the file.
func (r *Results) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
