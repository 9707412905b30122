package job

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"stratbench/internal/nofollow"
	"stratbench/internal/termtext"
)

// Store is $STRATBENCH_HOME: the jobs folder and the prechecks folder.
//
// Nothing a job folder holds is trusted to name a path: a job is the
// folder jobs/ID (ID of the job id form, validID), reached from the jobs
// folder's descriptor without following a symbolic link (nofollow), and its
// report is its job.json only when the job_id it records is ID
// (*RecordError otherwise). jobs/ itself must be a folder, not a link.
type Store struct{ home, jobs string }

// OpenStore opens (and creates) the store under home. A jobs folder that
// is a symbolic link is refused (nofollow.ErrSymlink): stratbench follows
// no link inside its home.
func OpenStore(home string) (*Store, error) {
	if home == "" {
		return nil, errors.New("open job store: no STRATBENCH_HOME")
	}
	jobs := filepath.Join(home, "jobs")
	if err := os.MkdirAll(jobs, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("open job store: %w", err)
	}
	s := &Store{home: home, jobs: jobs}
	d, err := s.openJobs()
	if err != nil {
		return nil, fmt.Errorf("open job store: %w", err)
	}
	d.Close()
	return s, nil
}

// ReadStore returns the store under home for reading only: it creates no
// folder and recovers nothing (shell completion reads it on every TAB). A
// store that does not exist has no jobs.
func ReadStore(home string) *Store {
	return &Store{home: home, jobs: filepath.Join(home, "jobs")}
}

// openJobs opens the jobs folder without following a link.
func (s *Store) openJobs() (*nofollow.Dir, error) {
	d, err := nofollow.Open(s.jobs)
	if errors.Is(err, nofollow.ErrSymlink) {
		return nil, fmt.Errorf("%s is a symbolic link: stratbench follows no link inside its home "+
			"(set STRATBENCH_HOME to the folder where the jobs should be instead)", s.jobs)
	}
	return d, err
}

// DefaultHome returns $STRATBENCH_HOME, or the XDG state folder
// ($XDG_STATE_HOME/stratbench, ~/.local/state/stratbench).
func DefaultHome() (string, error) {
	if h := os.Getenv("STRATBENCH_HOME"); h != "" {
		return h, nil
	}
	if s := os.Getenv("XDG_STATE_HOME"); s != "" {
		return filepath.Join(s, "stratbench"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find STRATBENCH_HOME: %w", err)
	}
	return filepath.Join(home, ".local", "state", "stratbench"), nil
}

// Home returns the store's folder, $STRATBENCH_HOME.
func (s *Store) Home() string { return s.home }

// JobDir returns the folder of job id.
func (s *Store) JobDir(id string) string { return filepath.Join(s.jobs, id) }

// validID reports whether id has the job id form: a plain file name of
// letters, digits, "-", "_" and "." that does not start with "." (so never
// "." or ".."), at most 128 bytes.
func validID(id string) bool {
	if id == "" || id[0] == '.' || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '.' || r == '_') {
			return false
		}
	}
	return true
}

// IsJobID reports whether id has the form of a job id (see Store).
func IsJobID(id string) bool { return validID(id) }

// maxReportFile bounds what is read of a job.json: a report is a few KiB,
// more with a strategy's metadata and a failure's traceback, each within
// the 8 MiB of a protocol message; a larger one is not a report stratbench
// wrote (and is left alone, never removed, as such: RecordError).
const maxReportFile = 32 << 20

// RecordError is a job folder whose job.json is not its job's report: not a
// regular file (a link, a FIFO), too large, not a report, or the report of
// another job (its job_id is not the folder's name: a copy, or a record
// edited to name another path). Nothing acts on such a folder by what it
// records; listings leave it out and say so, prune leaves it alone.
type RecordError struct {
	ID   string // the folder's name
	Path string // its job.json
	Err  error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("job folder %s: %s is not this job's report (%v)", e.ID, e.Path, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// ErrUnknownJob is returned for a job id that has no job folder.
var ErrUnknownJob = errors.New("unknown job")

// maxQuotedID is how much of a recorded id a message quotes.
const maxQuotedID = 64

// Load returns one job's report: the job.json of the folder jobs/id, which
// must record id as its job_id (*RecordError otherwise).
func (s *Store) Load(id string) (*Report, error) {
	dir, err := s.openJob(id)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return ReadReport(dir, id)
}

// OpenJob opens the folder of job id to read what it holds, never through
// a link: an id not of the job id form, or without a folder, is
// ErrUnknownJob, and the folder is reached from the jobs folder's
// descriptor. The caller closes it.
func (s *Store) OpenJob(id string) (*nofollow.Dir, error) { return s.openJob(id) }

// openJob opens the folder of job id, never through a link.
func (s *Store) openJob(id string) (*nofollow.Dir, error) {
	if !validID(id) {
		return nil, fmt.Errorf("%w %q", ErrUnknownJob, id)
	}
	jobs, err := s.openJobs()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w %q (see `stratbench jobs`)", ErrUnknownJob, id)
	}
	if err != nil {
		return nil, fmt.Errorf("load job %s: %w", id, err)
	}
	defer jobs.Close()
	dir, err := jobs.Sub(id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w %q (see `stratbench jobs`)", ErrUnknownJob, id)
	}
	if errors.Is(err, nofollow.ErrSymlink) || errors.Is(err, syscall.ENOTDIR) {
		return nil, fmt.Errorf("%w %q: %s is not a job folder (%v)", ErrUnknownJob, id, s.JobDir(id), err)
	}
	if err != nil {
		return nil, fmt.Errorf("load job %s: %w", id, err)
	}
	return dir, nil
}

// ReadReport reads the report of job id from its folder dir (opened from
// the jobs folder, as Folders gives it): its job.json, which must record id
// as its job_id (*RecordError otherwise).
func ReadReport(dir *nofollow.Dir, id string) (*Report, error) {
	data, err := dir.ReadFile("job.json", maxReportFile)
	if errors.Is(err, fs.ErrNotExist) {
		// A job being created right now has no report yet.
		return nil, fmt.Errorf("%w %q (see `stratbench jobs`)", ErrUnknownJob, id)
	}
	path := dir.Join("job.json")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is the RecordError's
		}
		return nil, &RecordError{ID: id, Path: path, Err: err}
	}
	r, err := decodeReport(data)
	if err != nil {
		return nil, &RecordError{ID: id, Path: path, Err: err}
	}
	if r.JobID != id {
		return nil, &RecordError{ID: id, Path: path, Err: fmt.Errorf("its job_id is %s, not its folder's name", termtext.Quoted(r.JobID, maxQuotedID))}
	}
	return r, nil
}

// decodeReport decodes a job.json. The params keep their numbers as
// written (json.Number): a float64 would round an int beyond 2**53, and
// engine.Recover writes back the report it loads, which must keep the
// params the job ran with; status and jobs then show them as the job got
// them. The report is decoded from data itself (a decoder would copy it:
// a job.json may take 32 MiB), the params apart.
func decodeReport(data []byte) (*Report, error) {
	var w struct {
		Report
		Strategy struct {
			Path   string          `json:"path"`
			SHA256 string          `json:"sha256"`
			Params json.RawMessage `json:"params"`
		} `json:"strategy"`
	}
	// As json.Unmarshal does, nothing may follow the report.
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, err
	}
	r := w.Report
	r.Strategy = StrategyInfo{Path: w.Strategy.Path, SHA256: w.Strategy.SHA256}
	if len(w.Strategy.Params) > 0 {
		dec := json.NewDecoder(bytes.NewReader(w.Strategy.Params))
		dec.UseNumber()
		if err := dec.Decode(&r.Strategy.Params); err != nil {
			return nil, fmt.Errorf("strategy.params: %w", err)
		}
	}
	return &r, nil
}

// IDs returns the job ids, newest first: the names of the folders in jobs/
// that have the job id form (links and other files are no jobs).
func (s *Store) IDs() ([]string, error) {
	jobs, err := s.openJobs()
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer jobs.Close()
	return jobIDs(jobs)
}

// jobIDs lists the job folders of the jobs folder, newest first.
func jobIDs(jobs *nofollow.Dir) ([]string, error) {
	entries, err := jobs.Entries()
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if e.Type().IsDir() && validID(e.Name()) {
			ids = append(ids, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	return ids, nil
}

// Folders calls fn for every job folder of the jobs folder (IDs, newest
// first), each opened from the jobs folder's descriptor without following
// a link (nofollow) and closed when fn returns; a folder gone meanwhile, or
// no longer a folder, is left out. It stops at fn's first error and
// returns it.
func (s *Store) Folders(fn func(dir *nofollow.Dir, id string) error) error {
	jobs, err := s.openJobs()
	if err != nil {
		return err
	}
	defer jobs.Close()
	ids, err := jobIDs(jobs)
	if err != nil {
		return err
	}
	for _, id := range ids {
		dir, err := jobs.Sub(id)
		if err != nil {
			continue // gone meanwhile, or no longer a folder
		}
		err = fn(dir, id)
		dir.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// List returns every job's report as listings show it (see Checked),
// newest first. Folders without a job.json (a job being created right
// now) and those whose job.json is not their report are left out.
func (s *Store) List() ([]*Report, error) {
	reports, _, err := s.Checked()
	return reports, err
}

// Checked is List, and the job folders it leaves out because their
// job.json is not their report (RecordError), for the caller to say so.
// Each report is the part of it that listings show and prune decides on
// (listed.go: no traceback, metadata or figures per symbol; Load reads a
// report whole), read one at a time: memory is about a KiB a job.
func (s *Store) Checked() (reports []*Report, bad []*RecordError, err error) {
	var rr reportReader
	reports = []*Report{} // JSON: [], not null
	err = s.Folders(func(dir *nofollow.Dir, id string) error {
		r, err := rr.read(dir, id)
		var re *RecordError
		switch {
		case err == nil:
			reports = append(reports, r)
		case errors.As(err, &re):
			bad = append(bad, re)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list jobs: %w", err)
	}
	return reports, bad, nil
}

// Remove removes the folder of job id and everything in it, from the jobs
// folder's descriptor and without following a link (nofollow.RemoveAll):
// nothing outside jobs/id is removed. It is the caller's to decide that the
// job may go (prune: it has ended).
func (s *Store) Remove(id string) error {
	if !validID(id) {
		return fmt.Errorf("%w %q", ErrUnknownJob, id)
	}
	jobs, err := s.openJobs()
	if err != nil {
		return fmt.Errorf("remove job %s: %w", id, err)
	}
	defer jobs.Close()
	if err := jobs.RemoveAll(id); err != nil {
		return fmt.Errorf("remove job %s: %w", id, err)
	}
	return nil
}

// followPoll is how often Logs looks for new lines of a running job.
const followPoll = 100 * time.Millisecond

// Follow is how Logs follows a job: it reports whether nothing runs the
// job in the folder dir any more although its report still says running
// (its stratbench is gone). Telling needs the processes, which are the
// engine's: engine.RunnerGone.
type Follow func(dir *nofollow.Dir) bool

// Logs calls fn for every line of job id's log. With follow not nil, it
// keeps reading while the job runs and returns when the job has ended (its
// final report, or follow says nothing runs it any more) or ctx is done;
// with nil, it returns at the end of what is written.
func (s *Store) Logs(ctx context.Context, id string, follow Follow, fn func(LogLine) error) error {
	dir, err := s.openJob(id)
	if err != nil {
		return err
	}
	defer dir.Close()
	rep, err := ReadReport(dir, id)
	if err != nil {
		return err
	}
	f, err := dir.Open("logs.jsonl")
	if err != nil {
		return fmt.Errorf("logs of %s: %w", id, err)
	}
	defer f.Close()
	// A line over MaxLogRecord is skipped and said, never held: nothing
	// read from the home sizes an allocation.
	lr := &logReader{r: bufio.NewReaderSize(f, 64<<10)}
	path := dir.Join("logs.jsonl")
	lineNo := 0
	at := rep.StartedAt // the notices' time: the line before them
	for {
		line, skipped, err := lr.next()
		if err == nil {
			lineNo++
			ll := logLineSkipped(path, lineNo, skipped)
			if skipped == 0 {
				ll = LogLine{}
				if jerr := json.Unmarshal(line, &ll); jerr != nil {
					return fmt.Errorf("logs of %s: logs.jsonl line %d: %w", id, lineNo, jerr)
				}
				at = ll.Time
			} else {
				ll.Time = at
			}
			if ferr := fn(ll); ferr != nil {
				return ferr
			}
			continue
		}
		if err != io.EOF {
			return fmt.Errorf("logs of %s: %w", id, err)
		}
		unfinished := func() error {
			if n := lr.pending(); n > 0 {
				ll := logUnfinished(path, n)
				ll.Time = at
				return fn(ll)
			}
			return nil
		}
		if follow == nil {
			return unfinished()
		}
		// At the end of what is written so far: done if the job has ended
		// (its final report is written after its last log line), or if the
		// stratbench running it is gone.
		rep, lerr := ReadReport(dir, id)
		if errors.Is(lerr, ErrUnknownJob) {
			return nil // the folder went away: a job that could not run at all
		}
		if lerr == nil && (rep.Status != StatusRunning || follow(dir)) {
			if _, perr := lr.r.Peek(1); perr == io.EOF {
				return unfinished()
			}
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(followPoll):
		}
	}
}

// Complete returns the job ids that start with prefix, newest first, for
// shell completion.
func (s *Store) Complete(prefix string) []string {
	ids, _ := s.IDs()
	var out []string
	for _, id := range ids {
		if strings.HasPrefix(id, prefix) {
			out = append(out, id)
		}
	}
	return out
}
