package engine

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

	"stratbench/contract"
	"stratbench/internal/atomicfile"
	"stratbench/internal/nofollow"
	"stratbench/internal/termtext"
	"stratbench/supervisor"
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
	return loadReport(dir, id)
}

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

// loadReport reads the report of job id from its folder dir.
func loadReport(dir *nofollow.Dir, id string) (*Report, error) {
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
// Recover writes back the report it loads, which must keep the params the
// job ran with; status and jobs then show them as the job got them.
func decodeReport(data []byte) (*Report, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var r Report
	if err := dec.Decode(&r); err != nil {
		return nil, err
	}
	// As json.Unmarshal, nothing may follow the report.
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid data after the report")
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

// List returns every job's report, newest first. Folders without a job.json
// (a job being created right now) and those whose job.json is not their
// report (see Checked) are left out.
func (s *Store) List() ([]*Report, error) {
	reports, _, err := s.Checked()
	return reports, err
}

// Checked is List, and the job folders it leaves out because their
// job.json is not their report (RecordError), for the caller to say so.
func (s *Store) Checked() (reports []*Report, bad []*RecordError, err error) {
	ids, err := s.IDs()
	if err != nil {
		return nil, nil, err
	}
	reports = make([]*Report, 0, len(ids))
	for _, id := range ids {
		r, err := s.Load(id)
		var re *RecordError
		switch {
		case err == nil:
			reports = append(reports, r)
		case errors.As(err, &re):
			bad = append(bad, re)
		}
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

// Logs calls fn for every line of job id's log. With follow, it keeps reading
// while the job runs and returns when the job has ended or ctx is done.
func (s *Store) Logs(ctx context.Context, id string, follow bool, fn func(LogLine) error) error {
	dir, err := s.openJob(id)
	if err != nil {
		return err
	}
	defer dir.Close()
	if _, err := loadReport(dir, id); err != nil {
		return err
	}
	f, err := dir.Open("logs.jsonl")
	if err != nil {
		return fmt.Errorf("logs of %s: %w", id, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 256<<10)
	lineNo := 0
	var partial []byte
	for {
		chunk, err := r.ReadBytes('\n')
		partial = append(partial, chunk...)
		if err == nil {
			lineNo++
			var ll LogLine
			if jerr := json.Unmarshal(partial, &ll); jerr != nil {
				return fmt.Errorf("logs of %s: logs.jsonl line %d: %w", id, lineNo, jerr)
			}
			partial = partial[:0]
			if ferr := fn(ll); ferr != nil {
				return ferr
			}
			continue
		}
		if err != io.EOF {
			return fmt.Errorf("logs of %s: %w", id, err)
		}
		if !follow {
			return nil
		}
		// At the end of what is written so far: done if the job has ended
		// (its final report is written after its last log line), or if the
		// stratbench running it is gone.
		rep, lerr := loadReport(dir, id)
		if errors.Is(lerr, ErrUnknownJob) {
			return nil // the folder went away: a job that could not run at all
		}
		if lerr == nil && (rep.Status != StatusRunning || ownerGone(dir) || unsaved(dir)) {
			if _, perr := r.Peek(1); perr == io.EOF {
				return nil
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

// ownerFile names, in a job folder, the stratbench running the job; it is
// removed once the final report is written.
const ownerFile = "owner.json"

// writeOwner writes the owner record without waiting for the disk
// (atomicfile.Volatile): it names a process, which a crash of the machine
// ends anyway, and a record that the crash left empty reads as an owner
// that is gone (ownerGone), which is the truth then. A sync here cost a
// sweep's run about 0.7 ms (measured, this VM's disk).
func writeOwner(dir string) error {
	self, err := supervisor.Self()
	if err != nil {
		return err
	}
	return writeJSONFile(filepath.Join(dir, ownerFile), self, atomicfile.Volatile)
}

// maxOwnerFile bounds what is read of an owner record (a few dozen bytes).
const maxOwnerFile = 4 << 10

// ownerGone reports whether the job in dir has an owner record naming a
// stratbench that is no longer alive.
func ownerGone(dir *nofollow.Dir) bool {
	data, err := dir.ReadFile(ownerFile, maxOwnerFile)
	if err != nil {
		return false
	}
	var o supervisor.ProcID
	if json.Unmarshal(data, &o) != nil {
		return true
	}
	return !o.Alive()
}

// unsaved reports whether the job in dir ended without its final report
// (see unsavedFile).
func unsaved(dir *nofollow.Dir) bool {
	_, err := dir.Lstat(unsavedFile)
	return err == nil
}

// Recover cleans up after a stratbench that was killed while running jobs:
// it kills the leftover processes of their trees and marks the jobs whose
// stratbench is gone as failed. A job whose stratbench ended it but could
// not save its final report (its owner record renamed to unsavedFile) is
// marked failed too, saying so, not as killed. It returns the ids of the
// jobs it marked.
//
// It looks only at the job folders of the jobs folder (IDs), each opened
// from the jobs folder's descriptor, and reads, writes, moves and removes
// in each through that descriptor without following a link (nofollow): a
// job folder that is a link, or a link in one, never takes it elsewhere.
func (s *Store) Recover() ([]string, error) {
	jobs, err := s.openJobs()
	if err != nil {
		return nil, fmt.Errorf("recover jobs: %w", err)
	}
	defer jobs.Close()
	all, err := jobIDs(jobs)
	if err != nil {
		return nil, fmt.Errorf("recover jobs: %w", err)
	}
	var ids []string
	// The process trees' errors are reported after: the jobs are still
	// recovered.
	var sweepErrs []error
	for _, id := range all {
		dir, err := jobs.Sub(id)
		if err != nil {
			continue // gone meanwhile, or no longer a folder
		}
		marked, sweepErr, err := recoverJob(dir, id)
		dir.Close()
		if sweepErr != nil {
			sweepErrs = append(sweepErrs, fmt.Errorf("recover jobs: %w", sweepErr))
		}
		if err != nil {
			return ids, errors.Join(append([]error{err}, sweepErrs...)...)
		}
		if marked {
			ids = append(ids, id)
		}
	}
	return ids, errors.Join(sweepErrs...)
}

// recoverJob is Recover for the folder dir of job id: it kills the
// leftovers of its tree (sweepErr: their state record could not be read or
// swept) and, when its stratbench is gone or could not save it, marks it
// failed (marked) and tidies its folder.
func recoverJob(dir *nofollow.Dir, id string) (marked bool, sweepErr, err error) {
	killed := 0
	if state, rerr := dir.ReadFile(procsFile, supervisor.MaxStateFile); rerr == nil {
		n, swept, serr := supervisor.SweepRecord(state)
		if serr == nil && swept {
			serr = dir.Remove(procsFile)
		}
		if serr != nil && !errors.Is(serr, fs.ErrNotExist) {
			sweepErr = fmt.Errorf("supervisor: sweep state file %s: %w", dir.Join(procsFile), serr)
		}
		killed = n
	} else if !errors.Is(rerr, fs.ErrNotExist) {
		sweepErr = fmt.Errorf("supervisor: sweep state file %s: %w", dir.Join(procsFile), rerr)
	}
	_, ownerErr := dir.Lstat(ownerFile)
	owned := ownerErr == nil
	ended := unsaved(dir)
	gone := owned && ownerGone(dir)
	if !ended && !gone {
		return false, sweepErr, nil // no owner record, or its stratbench is alive and runs it
	}
	rep, lerr := loadReport(dir, id)
	var re *RecordError
	if errors.As(lerr, &re) {
		// Its job.json is not its report (another job's, or a record
		// naming another path): nothing is done by what it says, and
		// the folder is left as it is (listings say why).
		return false, sweepErr, nil
	}
	if lerr == nil && rep.Status == StatusRunning {
		msg := "stratbench ended before the job finished (it was killed); where the run was is unknown"
		if ended {
			msg = "stratbench: the job ended, but its final report could not be saved here " +
				"(see save_errors in the report printed where it ran); its outcome is unknown here"
		}
		if killed > 0 {
			msg += fmt.Sprintf("; %d leftover worker process(es) were killed at the next start", killed)
		}
		rep.Status = StatusFailed
		removeWriteLeftovers(dir)
		endedAt := lastWritten(dir, rep.StartedAt, time.Now())
		if endedAt.After(rep.StartedAt) {
			msg += "; its end is its folder's last write (when it died is not recorded)"
		} else {
			// Nothing written since the start: when it died is not known,
			// only that it had by now.
			endedAt = time.Now()
			msg += "; its end is when it was found (nothing was written after its start)"
		}
		rep.Failure = &contract.Failure{Kind: contract.KindCrash, Hook: contract.HookOnData, Message: msg}
		rep.FinishedAt = &endedAt
		rep.DurationMS = endedAt.Sub(rep.StartedAt).Milliseconds()
		data, merr := json.MarshalIndent(rep, "", "  ")
		if merr != nil {
			return false, sweepErr, fmt.Errorf("encode job.json: %w", merr)
		}
		if werr := dir.WriteFile("job.json", append(data, '\n'), 0o644); werr != nil {
			return false, sweepErr, werr
		}
		marked = true
	}
	moveRecords(dir)
	dir.Remove(reserveFile)
	if ended {
		dir.Remove(unsavedFile)
	}
	if gone {
		dir.Remove(ownerFile)
	}
	return marked, sweepErr, nil
}

// removeWriteLeftovers removes the temporary files of the atomic writes
// of the job folder dir's JSON files (its report, its owner record, its
// process list) that a killed stratbench left there.
func removeWriteLeftovers(dir *nofollow.Dir) {
	entries, _ := dir.Entries()
	pattern := atomicfile.TempPattern("*.json")
	for _, e := range entries {
		if ok, _ := filepath.Match(pattern, e.Name()); ok {
			dir.Remove(e.Name())
		}
	}
}

// lastWritten is when the job in dir was last seen alive: the latest
// modification of stratbench's own files in its folder (the report, the
// logs, the records; not artifacts/, the strategy's), within [started,
// now]. A job found dead days later ended then, not at its recovery, and
// its duration is the time it ran.
func lastWritten(dir *nofollow.Dir, started, now time.Time) time.Time {
	last := started
	entries, _ := dir.Entries()
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if info, err := dir.Lstat(e.Name()); err == nil && info.Mode().IsRegular() && info.ModTime().After(last) {
			last = info.ModTime()
		}
	}
	if last.After(now) {
		return now
	}
	return last
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

// unsavedFile replaces the owner record of a job whose stratbench ended it
// but could not write its final report (a full disk, say). Renaming needs
// no free space, so the record is kept where the report could not be:
// Store.Recover tells such a job from one whose stratbench died while
// running it, which still has its owner record.
const unsavedFile = "unsaved.json"

// procsFile is the state record of a job's process tree in its folder
// (supervisor's): what Recover sweeps.
const procsFile = "procs.json"

// markUnsaved renames the owner record of the job in dir to unsavedFile.
func markUnsaved(dir string) {
	os.Rename(filepath.Join(dir, ownerFile), filepath.Join(dir, unsavedFile))
}
