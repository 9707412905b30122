package sweep

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Follower reads a sweep's folder while its sweep runs, in this process
// or another, for a view of it: the results appended since it last
// looked, and the document when it was saved again. It only reads: it
// takes no lock, so a resume or the running sweep never finds it in the
// way.
type Follower struct {
	store   *Store
	id      string
	results string // the path of results.jsonl
	offset  int64  // the length of the complete lines read
	seen    map[resultKey]struct{}
	doc     os.FileInfo // sweep.json as it was last read
}

// Follow opens sweep id for following. It returns the sweep's document
// and the results it has now; Poll returns what comes after.
func (s *Store) Follow(id string) (*Follower, *Document, []Result, error) {
	if !IsID(id) {
		return nil, nil, nil, fmt.Errorf("%w %q", ErrUnknownSweep, id)
	}
	f := &Follower{store: s, id: id, results: filepath.Join(s.Dir(id), ResultsFile), seen: map[resultKey]struct{}{}}
	doc, err := f.loadDoc()
	if err != nil {
		return nil, nil, nil, err
	}
	results, err := f.readResults()
	if err != nil {
		return nil, nil, nil, err
	}
	return f, doc, results, nil
}

// Poll returns the results appended since the last look, the document
// when it was saved since (else nil), and whether the sweep is still
// running (Running: its results are held open). A sweep that stopped
// running has been read whole by the Poll that says so.
func (f *Follower) Poll() (results []Result, doc *Document, running bool, err error) {
	// Whether it runs first: what it wrote before it stopped is then
	// read below.
	if running, err = f.store.Running(f.id); err != nil {
		return nil, nil, false, err
	}
	if results, err = f.readResults(); err != nil {
		return nil, nil, false, err
	}
	info, err := os.Stat(filepath.Join(f.store.Dir(f.id), DocumentFile))
	if err != nil {
		return nil, nil, false, fmt.Errorf("follow sweep %s: %w", f.id, err)
	}
	if f.doc == nil || !os.SameFile(f.doc, info) || !info.ModTime().Equal(f.doc.ModTime()) || info.Size() != f.doc.Size() {
		if doc, err = f.loadDoc(); err != nil {
			return nil, nil, false, err
		}
	}
	return results, doc, running, nil
}

// loadDoc reads the document, noting which file it read.
func (f *Follower) loadDoc() (*Document, error) {
	info, err := os.Stat(filepath.Join(f.store.Dir(f.id), DocumentFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("follow sweep %s: %w", f.id, err)
	}
	doc, err := f.store.Load(f.id)
	if err != nil {
		return nil, err
	}
	f.doc = info
	return doc, nil
}

// readResults reads the complete lines appended after the offset. A line
// still being written is left for the next look; a result whose (fold,
// phase, index) came before is an error, as ReadResults makes it.
func (f *Follower) readResults() ([]Result, error) {
	file, err := os.Open(f.results)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("follow sweep %s: %w", f.id, err)
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, fmt.Errorf("follow sweep %s: %w", f.id, err)
	}
	if info.Size() < f.offset {
		return nil, fmt.Errorf("follow sweep %s: %s is shorter than the %d bytes read from it: it was rewritten", f.id, f.results, f.offset)
	}
	if info.Size() == f.offset {
		return nil, nil
	}
	rb, err := scanResults(io.NewSectionReader(file, f.offset, info.Size()-f.offset), f.results, -1)
	if err != nil {
		return nil, err
	}
	for i := range rb.Results {
		k := rb.Results[i].key()
		if _, dup := f.seen[k]; dup {
			return nil, fmt.Errorf("%s: %s has a second result", f.results, k)
		}
		f.seen[k] = struct{}{}
	}
	f.offset += rb.size
	return rb.Results, nil
}
