package job

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"stratbench/internal/nofollow"
)

// Record is one of stratbench's record files of a job: what the backtest
// wrote of its replay, apart from the strategy's artifacts (docs/report.md,
// "The job folder").
type Record string

// The records a backtest writes.
const (
	RecordEquity Record = "equity" // the equity after every event
	RecordTrades Record = "trades" // the closed round trips
	RecordOrders Record = "orders" // every order, cancel and execution
)

// AllRecords returns the records a backtest writes, in the order listings
// show them.
func AllRecords() []Record { return []Record{RecordEquity, RecordTrades, RecordOrders} }

// RecordsDir is the folder of a job folder that holds its records, beside
// artifacts/ (the strategy's): the strategy's files and stratbench's never
// share a name.
const RecordsDir = "records"

// CSVName is the record's name as CSV text ("equity.csv"): the name the
// driver writes it under (contract.Records), and the name of an older
// version's plain record.
func (r Record) CSVName() string { return string(r) + ".csv" }

// FileName is the record's file in RecordsDir: its CSV text compressed
// with gzip ("equity.csv.gz"), a series of gzip members each ending at
// the end of a line. zcat, Python's gzip module and pandas.read_csv read
// it as they read the CSV.
func (r Record) FileName() string { return r.CSVName() + ".gz" }

// RecordFileName returns the name the engine gives in RecordsDir to the
// record file the driver writes as name (a CSV name, "equity.csv").
func RecordFileName(name string) string { return name + ".gz" }

// MaxRecordText bounds the CSV text read of one record: the cap the
// engine writes them under (DefaultLimits().RecordBytes, its cut notice
// included) and room to spare. A record whose text is longer was not
// written by stratbench (a gzip file can hold a thousand times its size):
// reading it ends with ErrRecordTooLarge.
const MaxRecordText = 256<<20 + 64<<10

// ErrRecordTooLarge is the error of a record whose text passes MaxRecordText.
var ErrRecordTooLarge = errors.New("holds more text than a record stratbench writes")

// RecordReader reads one record of a job as CSV text, whatever its format
// on disk (compressed, or the plain CSV of an older version). It reads
// the file as it is: a record being written ends where the writing is.
type RecordReader struct {
	f    *os.File
	src  io.Reader // the text: f, or a gzip reader of f once opened
	gz   bool      // f is compressed (the reader is made at the first Read)
	left int64     // text still allowed (MaxRecordText)
	err  error     // sticky
}

// Name returns the record file's path, for messages.
func (r *RecordReader) Name() string { return r.f.Name() }

// Read implements io.Reader: the record's CSV text.
func (r *RecordReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.src == nil {
		zr, err := gzip.NewReader(r.f)
		if err == io.EOF {
			// An empty file: a record created, nothing written in it yet.
			r.err = io.EOF
			return 0, io.EOF
		}
		if err != nil {
			r.err = fmt.Errorf("%s: %w", r.Name(), err)
			return 0, r.err
		}
		r.src = zr
	}
	if r.left <= 0 {
		// At the limit: more text is an error, its end is not.
		var one [1]byte
		if n, err := io.ReadFull(r.src, one[:]); n > 0 {
			r.err = fmt.Errorf("%s %w (%d bytes of CSV)", r.Name(), ErrRecordTooLarge, int64(MaxRecordText))
		} else {
			r.err = r.readErr(err)
		}
		return 0, r.err
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.src.Read(p)
	r.left -= int64(n)
	if err != nil {
		r.err = r.readErr(err)
	}
	return n, r.err
}

// readErr is the error of a read of the text that returned err (not nil).
func (r *RecordReader) readErr(err error) error {
	switch {
	case err == io.EOF:
		return io.EOF
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s: it ends within a compressed block (the job is still writing it, or the file was cut)", r.Name())
	}
	return fmt.Errorf("%s: %w", r.Name(), err)
}

// Close closes the file.
func (r *RecordReader) Close() error { return r.f.Close() }

func newRecordReader(f *os.File, gz bool) *RecordReader {
	rr := &RecordReader{f: f, gz: gz, left: MaxRecordText}
	if !gz {
		rr.src = f
	}
	return rr
}

// OpenRecord opens record rec of job id (see OpenRecordIn).
func (s *Store) OpenRecord(id string, rec Record) (*RecordReader, error) {
	dir, err := s.openJob(id)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return OpenRecordIn(dir, rec)
}

// OpenRecordIn opens record rec of the job folder dir for reading, as CSV
// text: the one place that knows where a job keeps its records and how.
// It reads, never through a link and only regular files:
//
//   - records/NAME.csv.gz, the compressed record of this version;
//   - records/NAME.csv, the plain record of an older version's job that
//     had not ended (or was never recovered);
//   - artifacts/NAME.csv only when the job folder has no records folder:
//     an older version's job, which moved its records there when it
//     ended. A job folder of this version always has records/, so a file
//     the strategy wrote in artifacts/ is never taken for a record.
//
// A job without the record returns an error wrapping fs.ErrNotExist.
func OpenRecordIn(dir *nofollow.Dir, rec Record) (*RecordReader, error) {
	records, err := dir.Sub(RecordsDir)
	if errors.Is(err, fs.ErrNotExist) {
		artifacts, err := dir.Sub("artifacts")
		if err != nil {
			return nil, fmt.Errorf("open the %s record: %w", rec, err)
		}
		defer artifacts.Close()
		f, err := artifacts.Open(rec.CSVName())
		if err != nil {
			return nil, fmt.Errorf("open the %s record: %w", rec, err)
		}
		return newRecordReader(f, false), nil
	}
	if err != nil {
		return nil, fmt.Errorf("open the %s record: %w", rec, err)
	}
	defer records.Close()
	f, err := records.Open(rec.FileName())
	if err == nil {
		return newRecordReader(f, true), nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("open the %s record: %w", rec, err)
	}
	f, perr := records.Open(rec.CSVName())
	if perr == nil {
		return newRecordReader(f, false), nil
	}
	if !errors.Is(perr, fs.ErrNotExist) {
		return nil, fmt.Errorf("open the %s record: %w", rec, perr)
	}
	return nil, fmt.Errorf("open the %s record: %w", rec, err)
}

// RecordFiles is what a job's records folder holds, for listings: the
// files by name with their sizes on disk.
type RecordFiles struct {
	Dir   string     `json:"dir"`
	Files []Artifact `json:"files"`
	Bytes int64      `json:"bytes"` // the size of every file listed
}

// ListRecords lists the records folder of the job folder jobDir: its
// regular files (links and anything else are left out, never followed).
// A job folder without one (an older version's) has none listed: its
// records are among its artifacts.
func ListRecords(jobDir string) (RecordFiles, error) {
	out := RecordFiles{Dir: filepath.Join(jobDir, RecordsDir), Files: []Artifact{}}
	dir, err := nofollow.Open(out.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("list the records of %s: %w", jobDir, err)
	}
	defer dir.Close()
	entries, err := dir.Entries()
	if err != nil {
		return out, fmt.Errorf("list the records of %s: %w", jobDir, err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || len(out.Files) == MaxListedArtifacts {
			continue
		}
		info, err := dir.Lstat(e.Name())
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		out.Files = append(out.Files, Artifact{Name: e.Name(), Bytes: info.Size(), DiskBytes: info.Size()})
		out.Bytes += info.Size()
	}
	sort.Slice(out.Files, func(i, j int) bool { return out.Files[i].Name < out.Files[j].Name })
	return out, nil
}
