package backtest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Load reads a bar data file. Files named *.jsonl, *.ndjson or *.json are
// JSON Lines, *.csv is CSV, and any other file is JSON Lines when its first
// non-blank character is "{" and CSV otherwise. Every problem is a
// *DataError naming the file, and the line and field where there is one.
func Load(path string) (*Data, error) {
	d, _, err := load(path)
	return d, err
}

// load reads path and returns the data and the file's state before reading.
func load(path string) (*Data, fs.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, openError(path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, openError(path, err)
	}
	if info.IsDir() {
		return nil, nil, &DataError{File: path, Msg: "is a directory"}
	}
	d, err := parse(path, f, info.Size())
	if err != nil {
		return nil, nil, err
	}
	return d, info, nil
}

func openError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &DataError{File: path, Msg: err.Error()}
}

// parse reads bars from r, named file in messages; size is r's length when
// known, 0 otherwise.
func parse(file string, r io.Reader, size int64) (*Data, error) {
	h := sha256.New()
	r = io.TeeReader(r, h)
	jsonl := false
	switch strings.ToLower(filepath.Ext(file)) {
	case ".jsonl", ".ndjson", ".json":
		jsonl = true
	case ".csv":
	default:
		head := make([]byte, 512)
		n, err := io.ReadFull(r, head)
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return nil, &DataError{File: file, Msg: err.Error()}
		}
		head = head[:n]
		trimmed := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
		jsonl = len(trimmed) > 0 && trimmed[0] == '{'
		r = io.MultiReader(bytes.NewReader(head), r)
	}
	b := newBuilder(file)
	var err error
	if jsonl {
		err = parseJSONL(file, r, size, b)
	} else {
		err = parseCSV(file, r, size, b)
	}
	if err != nil {
		return nil, err
	}
	var digest [sha256.Size]byte
	h.Sum(digest[:0])
	return b.finish(file, digest)
}

// racyWindow is how long after a read a file's modification time must lie in
// the past before size and modification time alone are trusted to show that
// it did not change since; within it, the cache compares contents.
const racyWindow = 2 * time.Second

// Cache keeps loaded data sets between runs, so that re-running on the same
// file (watch mode) does not parse it again. A file is reused without reading
// it when its size and modification time are unchanged and the modification
// was at least two seconds older than the last read; when only its time
// changed, or it was modified close to the read, its content hash is compared
// instead, and a file of another size is parsed again. The
// cache holds at most maxBytes of columns, dropping the least recently used
// files first. It is safe for concurrent use.
type Cache struct {
	mu       sync.Mutex
	maxBytes int64
	entries  map[string]*cacheEntry // by absolute path
	clock    uint64
}

type cacheEntry struct {
	size     int64
	modTime  time.Time
	readAt   time.Time // when the content was last read in full
	data     *Data
	lastUsed uint64
}

// NewCache returns an empty cache that keeps at most maxBytes of columns
// (a bar takes 52 bytes).
func NewCache(maxBytes int64) *Cache {
	return &Cache{maxBytes: maxBytes, entries: make(map[string]*cacheEntry)}
}

// Load returns the data of path, from the cache when the file is unchanged.
// Errors are as for Load.
func (c *Cache) Load(path string) (*Data, error) {
	key, err := filepath.Abs(path)
	if err != nil {
		return nil, &DataError{File: path, Msg: err.Error()}
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, openError(path, err)
	}
	if d := c.lookup(key, path, info); d != nil {
		return d, nil
	}
	readAt := time.Now()
	d, info, err := load(path)
	if err != nil {
		return nil, err
	}
	c.store(key, &cacheEntry{size: info.Size(), modTime: info.ModTime(), readAt: readAt, data: d})
	return d, nil
}

// lookup returns the cached data of the file at key when it is unchanged.
// The entry's fields are read and written under c.mu only; the file is
// hashed outside the lock.
func (c *Cache) lookup(key, path string, info fs.FileInfo) *Data {
	c.mu.Lock()
	e := c.entries[key]
	if e == nil || e.size != info.Size() {
		c.mu.Unlock()
		return nil
	}
	modTime, readAt, d := e.modTime, e.readAt, e.data
	c.mu.Unlock()
	// A file touched or rewritten with the same content (editors' atomic
	// saves), or modified close to the last read, when a later change could
	// have kept the same size and time stamp: compare the content.
	recheck := !modTime.Equal(info.ModTime()) || !info.ModTime().Before(readAt.Add(-racyWindow))
	if recheck {
		readAt = time.Now()
		digest, err := hashFile(path)
		if err != nil || digest != d.digest {
			return nil
		}
	}
	c.mu.Lock()
	if c.entries[key] == e {
		if recheck {
			e.modTime, e.readAt = info.ModTime(), readAt
		}
		c.clock++
		e.lastUsed = c.clock
	}
	c.mu.Unlock()
	if d.source != path {
		named := *d
		named.source = path
		d = &named
	}
	return d
}

func (c *Cache) store(key string, e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, key)
	size := e.data.sizeBytes()
	if size > c.maxBytes {
		return
	}
	c.clock++
	e.lastUsed = c.clock
	c.entries[key] = e
	total := int64(0)
	for _, x := range c.entries {
		total += x.data.sizeBytes()
	}
	for total > c.maxBytes {
		var oldestKey string
		var oldest *cacheEntry
		for k, x := range c.entries {
			if oldest == nil || x.lastUsed < oldest.lastUsed {
				oldestKey, oldest = k, x
			}
		}
		total -= oldest.data.sizeBytes()
		delete(c.entries, oldestKey)
	}
}

func hashFile(path string) ([sha256.Size]byte, error) {
	var digest [sha256.Size]byte
	f, err := os.Open(path)
	if err != nil {
		return digest, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return digest, err
	}
	h.Sum(digest[:0])
	return digest, nil
}
