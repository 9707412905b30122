package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"stratbench/contract"
	"stratbench/internal/nofollow"
	"stratbench/internal/termtext"
)

// A listing (jobs, prune, the workbench's jobs pane) holds every job's
// report at once, and a job.json may take up to maxReportFile: a listing
// keeps of each only what it shows or decides on (listed), and reads the
// files one at a time into one buffer. Its memory is then that buffer and
// about a KiB a job, whatever the files hold.

// maxListedString bounds each string a listed report keeps (a path, a
// sweep's id, a failure's kind); maxListedParams the strategy's params
// as written (a strategy's MANIFEST names a few): larger ones are left
// out of the listing (status JOB shows them).
const (
	maxListedString = 4 << 10
	maxListedParams = 16 << 10
)

// skipJSON is a field a listing does not keep: decoded as nothing.
type skipJSON struct{}

func (*skipJSON) UnmarshalJSON([]byte) error { return nil }

// listedJSON is a job.json as a listing decodes it: the fields it never
// shows (a traceback, the strategy's metadata, the symbols' figures) are
// skipped, and the params kept as written until they are known to be
// small.
type listedJSON struct {
	Report
	Failure  *listedFailure `json:"failure"`
	Strategy struct {
		Path   string          `json:"path"`
		Params json.RawMessage `json:"params"`
	} `json:"strategy"`
	Metadata   skipJSON `json:"metadata"`
	Symbols    skipJSON `json:"symbols"`
	SaveErrors skipJSON `json:"save_errors"`
	Data       skipJSON `json:"data"`
	Market     skipJSON `json:"market"`
	Python     skipJSON `json:"python"`
	Hooks      skipJSON `json:"hooks"`
}

type listedFailure struct {
	Kind      contract.FailureKind `json:"kind"`
	Hook      contract.Hook        `json:"hook"`
	Message   skipJSON             `json:"message"`
	Traceback skipJSON             `json:"traceback"`
	Frames    skipJSON             `json:"frames"`
}

// listed returns the part of a report that listings use: its id, status,
// times, strategy's path and params, failure's kind and hook, metrics
// (without positions) and sweep tag, each string cut to
// maxListedString. It is a *Report so that listings print it as they
// print a loaded one; what it leaves out is zero.
func (l *listedJSON) listed() *Report {
	r := &Report{JobID: l.JobID, Status: Status(clipString(string(l.Status))), StartedAt: l.StartedAt,
		FinishedAt: l.FinishedAt, DurationMS: l.DurationMS, Metrics: l.Metrics, Sweep: l.Sweep}
	r.Strategy.Path = clipString(l.Strategy.Path)
	if len(l.Strategy.Params) <= maxListedParams {
		dec := json.NewDecoder(bytes.NewReader(l.Strategy.Params))
		dec.UseNumber()
		dec.Decode(&r.Strategy.Params) // checked when the report was read whole
	}
	if l.Failure != nil {
		r.Failure = &contract.Failure{Kind: contract.FailureKind(clipString(string(l.Failure.Kind))), Hook: contract.Hook(clipString(string(l.Failure.Hook)))}
	}
	if r.Metrics != nil {
		m := *r.Metrics
		m.Positions = nil
		r.Metrics = &m
	}
	if r.Sweep != nil {
		s := *r.Sweep
		s.ID, s.Phase = clipString(s.ID), clipString(s.Phase)
		r.Sweep = &s
	}
	return r
}

func clipString(s string) string {
	if len(s) <= maxListedString {
		return s
	}
	return strings.Clone(s[:maxListedString]) + "…"
}

// reportReader reads job.json files for a listing into one buffer.
type reportReader struct{ buf bytes.Buffer }

// read returns the listed part of the report of job id in the folder dir,
// or a *RecordError as ReadReport does.
func (rr *reportReader) read(dir *nofollow.Dir, id string) (*Report, error) {
	path := dir.Join("job.json")
	f, err := dir.Open("job.json")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrUnknownJob // being created right now
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &RecordError{ID: id, Path: path, Err: err}
	}
	defer f.Close()
	rr.buf.Reset()
	if info, err := f.Stat(); err == nil && info.Size() <= maxReportFile {
		rr.buf.Grow(int(info.Size()) + bytes.MinRead) // read in place, not doubled as it grows
	}
	if _, err := rr.buf.ReadFrom(io.LimitReader(f, maxReportFile+1)); err != nil {
		return nil, &RecordError{ID: id, Path: path, Err: err}
	}
	if rr.buf.Len() > maxReportFile {
		return nil, &RecordError{ID: id, Path: path, Err: fmt.Errorf("%w of %d bytes", nofollow.ErrTooLarge, maxReportFile)}
	}
	var l listedJSON // decoded from the buffer itself, not a copy of it
	if err := json.Unmarshal(rr.buf.Bytes(), &l); err != nil {
		return nil, &RecordError{ID: id, Path: path, Err: err}
	}
	if l.JobID != id {
		return nil, &RecordError{ID: id, Path: path, Err: fmt.Errorf("its job_id is %s, not its folder's name", termtext.Quoted(l.JobID, maxQuotedID))}
	}
	return l.listed(), nil
}
