package data

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// dataExts are the extensions of the files a folder's listing takes
// (and .json.gz: see isDataName).
var dataExts = []string{".csv", ".jsonl", ".ndjson", ".json", ".parquet", ".feather", ".arrow"}

func pathError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &Error{File: path, Msg: err.Error(), Err: err}
}

// extOf is filepath.Ext.
func extOf(name string) string { return filepath.Ext(name) }

// notRegular says what a file that is neither a regular file nor a folder
// is, or "" when it is one of those: data is read from regular files
// only (a named pipe would block the open and the read; a device has no
// end).
func notRegular(info fs.FileInfo) string {
	what := ""
	switch m := info.Mode(); {
	case m.IsRegular() || m.IsDir():
		return ""
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeCharDevice != 0:
		what = "a character device"
	case m&fs.ModeDevice != 0:
		what = "a block device"
	default:
		what = "a special file"
	}
	return "is " + what + ", not a regular file: data is read from files and folders"
}

// openData opens a data file for reading without blocking, whatever it
// turns out to be (a named pipe put in its place since it was listed
// would block an open for reading until a writer comes), and refuses
// what is not a regular file.
func openData(path string) (*os.File, fs.FileInfo, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, pathError(path, &fs.PathError{Op: "open", Path: path, Err: err})
	}
	fh := os.NewFile(uintptr(fd), path)
	info, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, nil, pathError(path, err)
	}
	if info.IsDir() {
		fh.Close()
		return nil, nil, &Error{File: path, Msg: "is a directory"}
	}
	if what := notRegular(info); what != "" {
		fh.Close()
		return nil, nil, &Error{File: path, Msg: what}
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		fh.Close()
		return nil, nil, pathError(path, err)
	}
	return fh, info, nil
}

// openSource opens one data file and tells its format: by its first bytes,
// or by its extension.
func (s *Set) openSource(e fileEntry) (*source, error) {
	path := e.path
	fh, info, err := openData(path)
	if err != nil {
		return nil, err
	}
	src := &source{set: s, path: path, entry: e, fh: fh, seenMin: math.MaxInt64, seenMax: math.MinInt64,
		first: math.MaxInt64, last: math.MinInt64}
	src.size, src.modTime = info.Size(), info.ModTime()
	head := make([]byte, 512)
	n, err := fh.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		fh.Close()
		return nil, pathError(path, err)
	}
	head, err = head[:n], nil
	switch ext := strings.ToLower(extOf(path)); {
	case ext == ".parquet" || ext != ".csv" && strings.HasPrefix(string(head), "PAR1"):
		src.format = formatParquet
		if src.pq, err = openParquet(src); err == nil {
			src.tbl = src.pq
		}
	case ext == ".feather" || ext == ".arrow" || ext != ".csv" && (strings.HasPrefix(string(head), arrowMagic) || strings.HasPrefix(string(head), "FEA1")):
		src.format = formatFeather
		src.tbl, err = openFeather(src)
	case ext == ".gz" || ext != ".csv" && strings.HasPrefix(string(head), "\x1f\x8b"),
		ext != ".csv" && ext != ".jsonl" && ext != ".ndjson" && jsonArray(head):
		src.format = formatFTJSON
		src.tbl, err = openFTJSON(src, ext == ".gz" || strings.HasPrefix(string(head), "\x1f\x8b"))
	case formatFor(path, head):
		src.format = formatJSONL
	default:
		src.format = formatCSV
	}
	if err != nil {
		fh.Close()
		return nil, err
	}
	return src, nil
}

// jsonArray reports whether a file's first bytes start a JSON array.
func jsonArray(head []byte) bool {
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '['
}

// racyWindow is how long after a file was read its modification time must
// lie in the past for its size and modification time alone to show that
// it did not change since: a change within the file system's timestamp
// granularity of the read keeps both.
const racyWindow = 2 * time.Second

// Stale reports whether the paths the set was opened from now hold other
// data: a data file added to or gone from a folder, or a file whose
// content changed. A file is taken as unchanged when its size and
// modification time are, and it was modified at least two seconds before
// the set was opened; otherwise a CSV or JSON Lines file is hashed again
// and compared (a file rewritten with the same content, as some editors
// save, is not stale), and a Parquet file is stale. A path that cannot be
// read any more is stale too: opening it again says why.
func (s *Set) Stale() bool {
	files, err := listFiles(s.paths, s.timeframe)
	if err != nil || len(files) != len(s.srcs) {
		return true
	}
	for i, src := range s.srcs {
		if files[i].path != src.path || src.changed() {
			return true
		}
	}
	return false
}

// changed reports whether src.path holds other content than was read.
func (src *source) changed() bool {
	info, err := os.Stat(src.path)
	if err != nil {
		return true
	}
	held, err := src.fh.Stat()
	if err == nil && os.SameFile(info, held) && info.Size() == src.size && info.ModTime().Equal(src.modTime) &&
		info.ModTime().Before(src.set.openedAt.Add(-racyWindow)) {
		return false
	}
	src.digestMu.Lock()
	done := src.digestDone
	src.digestMu.Unlock()
	if !done {
		return true // Parquet, or a file not hashed yet: opened again
	}
	f, _, err := openData(src.path)
	if err != nil {
		return true
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return true
	}
	return !bytes.Equal(h.Sum(nil), src.digest[:])
}

// unchanged checks that src's file is as it was when it was scanned.
func (src *source) unchanged() error {
	info, err := src.fh.Stat()
	if err != nil {
		return pathError(src.path, err)
	}
	if info.Size() != src.size || !info.ModTime().Equal(src.modTime) {
		return &Error{File: src.path, Msg: "the file changed while it was being read"}
	}
	return nil
}
