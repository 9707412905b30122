package sweep

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"stratbench/internal/nofollow"
)

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
// other bad line, a (fold, phase, index) that repeats, and a line past
// the sweep's planned runs (scanResults) is an error naming the file and
// line.
func ReadResults(path string) (*ReadBack, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &ReadBack{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	defer f.Close()
	return scanResults(f, path, -1)
}

// scanResults reads the results lines of r (the file path). A results
// file is the home's, and what is kept of it is bounded by the sweep, not
// by the file: each result keeps its metrics as a run writes them
// (canonicalMetrics), not what else the line held; and, with most above
// 0 (the sweep's planned runs: a document saves them before its first
// result), a line past most results is an error.
func scanResults(r io.Reader, path string, most int64) (*ReadBack, error) {
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
		if most > 0 && int64(len(rb.Results)) >= most {
			return nil, fmt.Errorf("%s line %d: more results than the sweep's %d planned runs", path, lineNo, most)
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

// Listed is a sweep's status as listings show it: a sweep whose document
// says running but whose results nobody holds open was ended by a crash,
// and is resumable like a stopped one.
func (s *Store) Listed(doc *Document) Status {
	if doc.Status != StatusRunning {
		return doc.Status
	}
	if running, err := s.Running(doc.SweepID); err == nil && !running {
		return StatusStopped
	}
	return doc.Status
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
	res, rb, err := lockResults(f, plannedRuns(dir))
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
	return lockResults(f, -1)
}

// lockResults locks the results file f and reads back what it holds, at
// most most results (scanResults); it closes f on an error.
func lockResults(f *os.File, most int64) (*Results, *ReadBack, error) {
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
	rb, err := scanResults(f, path, most)
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

// plannedRuns returns the runs the document in the sweep folder dir plans
// (counts.total), -1 when it cannot be read: the bound of a resume's read
// back, taken before the document is loaded (after the results' lock). It
// reads the document up to its counts, which come before its runs.
func plannedRuns(dir *nofollow.Dir) int64 {
	f, err := dir.Open(DocumentFile)
	if err != nil {
		return -1
	}
	defer f.Close()
	dec := json.NewDecoder(io.LimitReader(f, maxDocumentFile))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return -1
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return -1
		}
		if tok != "counts" {
			if err := dec.Decode(&ignored{}); err != nil {
				return -1
			}
			continue
		}
		var c Counts
		if err := dec.Decode(&c); err != nil || c.Total <= 0 {
			return -1
		}
		return c.Total
	}
	return -1
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
