package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"stratbench/internal/nofollow"
	"stratbench/internal/units"
)

// recordsDir is the folder of the job folder that holds the driver's record
// files while the job runs. The strategy cannot write there (the sandbox
// grants it artifacts/ only), so it can neither truncate nor replace them;
// they move into artifacts/ when the job ends, or when Recover finds
// the job of a stratbench that died.
const recordsDir = "records"

// noticeRoom is what a capped file keeps free for its cut notice: a cap
// includes the notice.
const noticeRoom = 512

// jobRecords is the engine's Records: one capped file per record file in
// the job's records folder. Create and the writers are used by the driver's
// goroutine, close after Drive returned.
type jobRecords struct {
	dir, artifacts string
	limit          int64
	notice         func(string) // a system line in the job's log
	files          []*recordFile
	errs           []error // what could not be written, for the report
}

func newJobRecords(jobDir string, limit int64, notice func(string)) *jobRecords {
	return &jobRecords{
		dir:       filepath.Join(jobDir, recordsDir),
		artifacts: filepath.Join(jobDir, "artifacts"),
		limit:     max(limit, 2*noticeRoom),
		notice:    notice,
	}
}

// Create implements Records.
func (r *jobRecords) Create(name string) io.Writer {
	f := &recordFile{name: name, records: r, limit: r.limit - noticeRoom}
	r.files = append(r.files, f)
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		f.done = fmt.Errorf("bad record file name %q", name)
		r.errs = append(r.errs, f.done)
		return f
	}
	f.path = filepath.Join(r.dir, name)
	err := os.MkdirAll(r.dir, 0o755)
	if err == nil {
		// O_APPEND: after a failed write is truncated away, the next write
		// starts at the new end, not past it.
		f.file, err = os.OpenFile(f.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o644)
	}
	if err != nil {
		f.done = fmt.Errorf("%s not saved: %w", f.finalPath(), err)
		r.errs = append(r.errs, f.done)
		r.notice(f.done.Error())
	}
	return f
}

// close closes the record files and moves them into the artifacts folder.
// It returns what could not be written or moved.
func (r *jobRecords) close() []error {
	for _, f := range r.files {
		if f.file == nil {
			continue
		}
		if err := f.file.Close(); err != nil && f.err == nil {
			r.errs = append(r.errs, fmt.Errorf("%s: %w", f.finalPath(), err))
		}
		f.file = nil
		if err := os.Rename(f.path, f.finalPath()); err != nil {
			r.errs = append(r.errs, fmt.Errorf("move %s into artifacts: %w", f.name, err))
		}
	}
	os.Remove(r.dir) // only when empty: a file that could not move stays
	return r.errs
}

// moveRecords moves what a job that did not end normally left in its records
// folder into its artifacts folder; job is the job folder (nothing is
// followed: see Recover).
func moveRecords(job *nofollow.Dir) {
	records, err := job.Sub(recordsDir)
	if err != nil {
		return
	}
	defer records.Close()
	artifacts, err := job.Sub("artifacts")
	if err != nil {
		return
	}
	defer artifacts.Close()
	entries, _ := records.Entries()
	for _, e := range entries {
		records.Rename(e.Name(), artifacts, e.Name())
	}
	job.Remove(recordsDir) // only when it is empty now
}

// errCut is the error of a write to a record file that reached its cap.
var errCut = errors.New("record file cut at its cap")

// recordFile is one capped record file. Writes end at line ends, so the file
// is cut between lines: at most limit bytes of lines, then one notice line.
type recordFile struct {
	name, path string
	records    *jobRecords
	file       *os.File
	limit      int64 // bytes of lines, the notice excluded
	written    int64
	fields     int   // of the first line of a .csv file, for the notice
	done       error // set once the file takes nothing more
	err        error // the write error, when the disk failed
}

func (f *recordFile) finalPath() string { return filepath.Join(f.records.artifacts, f.name) }

// Write implements io.Writer; see Records.Create.
func (f *recordFile) Write(p []byte) (int, error) {
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
		if _, err := f.file.Write(p[:n]); err != nil {
			f.fail(err)
			return 0, f.done
		}
		f.written += int64(n)
	}
	if cut {
		f.cut()
		return n, f.done
	}
	return n, nil
}

// cut ends the file with its notice, once.
func (f *recordFile) cut() {
	f.done = errCut
	text := fmt.Sprintf("%s was cut at its %s cap: the records after this point are not in it "+
		"(the report's metrics and orders_hash cover the whole run)", f.name, units.Bytes(f.limit+noticeRoom))
	if _, err := f.file.Write(f.noticeLine(text)); err != nil {
		f.fail(err)
		return
	}
	f.records.notice(text)
}

// noticeLine is text as the file's last line: a comment line starting with
// "#", padded to the header's number of fields so that a strict CSV reader
// takes it too (the text has no commas or quotes).
func (f *recordFile) noticeLine(text string) []byte {
	line := "# stratbench: " + strings.NewReplacer(",", ";", "\"", "'", "\n", " ").Replace(text)
	return []byte(line + strings.Repeat(",", max(f.fields-1, 0)) + "\n")
}

// fail ends the file after a write error (a full disk, say): what the
// failed write left of a line is removed, so the file ends with whole lines,
// and a notice goes to the log and the report.
func (f *recordFile) fail(err error) {
	f.file.Truncate(f.written) // frees space: it needs none
	f.err = err
	f.done = fmt.Errorf("%s cut at %s: %w", f.finalPath(), units.Bytes(f.written), err)
	f.records.errs = append(f.records.errs, f.done)
	// Best effort: a whole notice line, or nothing.
	if _, werr := f.file.Write(f.noticeLine("could not write more: " + err.Error())); werr != nil {
		f.file.Truncate(f.written)
	}
	f.records.notice(f.name + " could not be written in full: " + f.done.Error())
}
