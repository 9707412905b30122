package sweep

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/internal/atomicfile"
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

// OpenSweep opens the folder of sweep id, never through a link: for a
// file written into it through its descriptor (the sweep's HTML report).
func (s *Store) OpenSweep(id string) (*nofollow.Dir, error) { return s.openSweep(id) }

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

// ErrChanged is returned by RemoveIdle for a sweep whose document is no
// longer what the caller decided on.
var ErrChanged = errors.New("the sweep changed since it was looked at")

// RemoveIdle removes sweep id as Remove does, unless it runs or changed:
// it takes the sweep's results lock as a resume does (OpenResults),
// without waiting (ErrBusy when another stratbench holds it), and keeps
// it while it removes the folder, so that no resume starts on a sweep as
// it goes. Under the lock it loads the document again and calls still
// with it (or with Load's error): false leaves the sweep (ErrChanged).
func (s *Store) RemoveIdle(id string, still func(*Document, error) bool) error {
	dir, err := s.openSweep(id)
	if err != nil {
		return err
	}
	defer dir.Close()
	f, err := dir.OpenFile(ResultsFile, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("remove sweep %s: %w", id, err)
	}
	defer f.Close() // the lock goes with the descriptor
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, wholeFileLock(unix.F_WRLCK)); err != nil {
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
			return ErrBusy
		}
		return fmt.Errorf("remove sweep %s: lock %s: %w", id, dir.Join(ResultsFile), err)
	}
	if !still(s.Load(id)) {
		return ErrChanged
	}
	return s.Remove(id)
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
		if err := atomicfile.SyncDir(s.dir); err != nil {
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
	return atomicfile.WriteFile(filepath.Join(dir, DocumentFile), append(data, '\n'), 0o644, atomicfile.Durable)
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
			rb, err := scanResults(f, f.Name(), doc.Counts.Total)
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
	return "", usage(FieldID, ref, "ambiguous: it starts "+strings.Join(matches, ", "))
}

// Swept returns, for each of the sweeps ids, the names of the params it
// varies (its grid's), from its document, so that a listing of its runs
// shows those of each run's params. It only reads; a sweep whose document
// cannot be read (pruned) has none. A nil store has no sweeps.
func (s *Store) Swept(ids []string) map[string][]string {
	if s == nil {
		return nil
	}
	swept := map[string][]string{}
	for _, id := range ids {
		swept[id] = nil
		if doc, err := s.Load(id); err == nil {
			for _, ax := range doc.Spec.Grid {
				swept[id] = append(swept[id], ax.Name)
			}
		}
	}
	return swept
}
