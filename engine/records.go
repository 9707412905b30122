package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"

	"stratbench/internal/units"
	"stratbench/job"
)

// The driver's record files live in the job folder's records folder
// (job.RecordsDir), made with the job folder, and stay there: the strategy
// cannot write there (the sandbox grants it artifacts/ only), so it can
// neither truncate nor replace them, and its own files in artifacts/ never
// share a name with them. Each is its CSV text compressed with gzip
// (job.RecordFileName): every Write of the driver (whole lines) becomes
// one gzip member, so the file always ends at the end of a line, a
// reader of a running job sees whole members but maybe the last, and a
// write that fails is truncated away to the previous member.
// docs/ARCHITECTURE.md says why gzip'd CSV and what it saves.

// recordLevel is the compression level: the fastest, which still keeps
// the example's records at about a fifth of their text
// (docs/BENCHMARKS.md).
const recordLevel = gzip.BestSpeed

// noticeRoom is what a capped file keeps free for its cut notice: a cap
// includes the notice.
const noticeRoom = 512

// jobRecords is the engine's Records: one capped file per record file in
// the job's records folder. Create and the writers are used by the driver's
// goroutine, close after Drive returned.
//
// The driver's goroutine decides what each file takes (the cap counts the
// text, so it is decided where the text is); compressing and writing it is
// done by the records' own goroutine (writeLoop, started by the first
// Create and ended by close), which runs beside the worker: at 1M bars gzip
// was a third of the host's CPU on the path between the worker's batches
// (docs/ARCHITECTURE.md, the hot path). The members are the ones the
// driver's goroutine would have written, in the same order: the files are
// the same bytes.
type jobRecords struct {
	dir    string
	limit  int64
	notice func(string) // a system line in the job's log; safe for concurrent use
	files  []*recordFile

	// The writer: chunks go through work, in order; their buffers come
	// back through spare. wrote is closed when writeLoop returned.
	work  chan recordChunk
	spare chan []byte
	wrote chan struct{}

	mu   sync.Mutex
	errs []error // what could not be written, for the report

	// Used by writeLoop only: one compressor and member buffer for all the
	// files.
	zw     *gzip.Writer
	member bytes.Buffer
}

// recordChunk is text for the end of a record file: whole lines.
type recordChunk struct {
	f    *recordFile
	text []byte
}

// recordQueue is how many chunks may wait for the writer: with the
// driver's 64 KiB chunks, about 0.5 MiB of text a job at most.
const recordQueue = 8

func newJobRecords(jobDir string, limit int64, notice func(string)) *jobRecords {
	return &jobRecords{
		dir:    filepath.Join(jobDir, job.RecordsDir),
		limit:  max(limit, 2*noticeRoom),
		notice: notice,
	}
}

// start starts the writer, once.
func (r *jobRecords) start() {
	if r.work != nil {
		return
	}
	r.work = make(chan recordChunk, recordQueue)
	r.spare = make(chan []byte, recordQueue+1)
	r.wrote = make(chan struct{})
	go r.writeLoop()
}

// writeLoop compresses and writes the chunks until close.
func (r *jobRecords) writeLoop() {
	defer close(r.wrote)
	for c := range r.work {
		f := c.f
		if f.failed.Load() == nil { // after a failure, its notice is the last line
			if err := f.put(c.text); err != nil {
				f.fail(err)
			}
		}
		select {
		case r.spare <- c.text[:0]:
		default:
		}
	}
}

// send queues text (copied) for the end of f.
func (r *jobRecords) send(f *recordFile, text []byte) {
	var buf []byte
	select {
	case buf = <-r.spare:
	default:
	}
	r.work <- recordChunk{f: f, text: append(buf, text...)}
}

// addErr records what could not be written.
func (r *jobRecords) addErr(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

// compress returns text as one gzip member, in a buffer reused by the
// next call. The writer's.
func (r *jobRecords) compress(text []byte) []byte {
	r.member.Reset()
	if r.zw == nil {
		r.zw, _ = gzip.NewWriterLevel(&r.member, recordLevel) // a valid level: no error
	} else {
		r.zw.Reset(&r.member)
	}
	r.zw.Write(text) // into memory: no error
	r.zw.Close()
	return r.member.Bytes()
}

// Create implements Records.
func (r *jobRecords) Create(name string) io.Writer {
	f := &recordFile{name: name, records: r, limit: r.limit - noticeRoom}
	r.files = append(r.files, f)
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		f.done = fmt.Errorf("bad record file name %q", name)
		r.addErr(f.done)
		return f
	}
	f.path = filepath.Join(r.dir, job.RecordFileName(name))
	err := os.MkdirAll(r.dir, 0o755)
	if err == nil {
		// O_APPEND: after a failed write is truncated away, the next write
		// starts at the new end, not past it.
		f.file, err = os.OpenFile(f.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o644)
	}
	if err != nil {
		f.done = fmt.Errorf("%s not saved: %w", f.path, err)
		r.addErr(f.done)
		r.notice(f.done.Error())
		return f
	}
	r.start()
	return f
}

// close waits for the writer, then closes the record files, which stay in
// the records folder. It returns what could not be written.
func (r *jobRecords) close() []error {
	if r.work != nil {
		close(r.work)
		<-r.wrote
		r.work = nil
	}
	for _, f := range r.files {
		if f.file == nil {
			continue
		}
		if err := f.file.Close(); err != nil && f.failed.Load() == nil {
			r.addErr(fmt.Errorf("%s: %w", f.path, err))
		}
		f.file = nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errs
}

// errCut is the error of a write to a record file that reached its cap.
var errCut = errors.New("record file cut at its cap")

// recordFile is one capped record file. Writes end at line ends, so the file
// is cut between lines: at most limit bytes of lines, then one notice line.
// The cap counts the CSV text, which the file holds compressed.
type recordFile struct {
	name, path string
	records    *jobRecords
	file       *os.File

	// The driver's goroutine's.
	limit   int64 // bytes of lines, the notice excluded
	written int64 // bytes of lines taken
	fields  int   // of the first line of a .csv file, for the notice
	done    error // set once the file takes nothing more

	// The writer's: failed is also read by Write.
	size   int64                 // the file's size: where its last member ends
	failed atomic.Pointer[error] // set when the disk failed
}

// put writes text as one member at the end of the file. A member that
// cannot be written in full is truncated away, so that the file ends with
// whole members.
func (f *recordFile) put(text []byte) error {
	m := f.records.compress(text)
	if _, err := f.file.Write(m); err != nil {
		f.file.Truncate(f.size) // frees space: it needs none
		return err
	}
	f.size += int64(len(m))
	return nil
}

// Write implements io.Writer; see Records.Create.
func (f *recordFile) Write(p []byte) (int, error) {
	if f.done == nil {
		if err := f.failed.Load(); err != nil {
			f.done = *err // the writer said so in the log
		}
	}
	if f.done != nil {
		return 0, f.done
	}
	if f.written == 0 && strings.HasSuffix(f.name, ".csv") {
		header, _, _ := bytes.Cut(p, []byte{'\n'})
		f.fields = 1 + bytes.Count(header, []byte{','})
	}
	n, cut := len(p), false
	if room := f.limit - f.written; int64(n) > room {
		n = bytes.LastIndexByte(p[:room], '\n') + 1
		cut = true
	}
	if n > 0 {
		f.records.send(f, p[:n])
		f.written += int64(n)
	}
	if cut {
		f.cut()
		return n, f.done
	}
	return n, nil
}

// cut ends the file with its notice, once. (When the disk failed before
// the notice is written, the writer's notice of the failure is the file's
// last line.)
func (f *recordFile) cut() {
	f.done = errCut
	text := fmt.Sprintf("%s was cut at its %s cap: the records after this point are not in it "+
		"(the report's metrics and orders_hash cover the whole run)", f.name, units.Bytes(f.limit+noticeRoom))
	f.records.send(f, f.noticeLine(text))
	f.records.notice(text)
}

// noticeLine is text as the file's last line: a comment line starting with
// "#", padded to the header's number of fields so that a strict CSV reader
// takes it too (the text has no commas or quotes).
func (f *recordFile) noticeLine(text string) []byte {
	line := "# stratbench: " + strings.NewReplacer(",", ";", "\"", "'", "\n", " ").Replace(text)
	return []byte(line + strings.Repeat(",", max(f.fields-1, 0)) + "\n")
}

// fail ends the file after a write error (a full disk, say), in the
// writer: what the failed write left of a line is removed (put), so the
// file ends with whole lines, and a notice goes to the log and the report.
// The driver's goroutine sees failed at its next Write.
func (f *recordFile) fail(err error) {
	done := fmt.Errorf("%s cut at %s of compressed CSV: %w", f.path, units.Bytes(f.size), err)
	f.records.addErr(done)
	// Best effort: a whole notice member, or nothing.
	f.put(f.noticeLine("could not write more: " + err.Error()))
	f.records.notice(f.name + " could not be written in full: " + done.Error())
	f.failed.Store(&done)
}
