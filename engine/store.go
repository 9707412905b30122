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
	"time"

	"stratbench/contract"
	"stratbench/internal/atomicfile"
	"stratbench/supervisor"
)

// Store is $STRATBENCH_HOME: the jobs folder and the prechecks folder.
type Store struct{ home, jobs string }

// OpenStore opens (and creates) the store under home.
func OpenStore(home string) (*Store, error) {
	if home == "" {
		return nil, errors.New("open job store: no STRATBENCH_HOME")
	}
	jobs := filepath.Join(home, "jobs")
	if err := os.MkdirAll(jobs, 0o755); err != nil {
		return nil, fmt.Errorf("open job store: %w", err)
	}
	return &Store{home: home, jobs: jobs}, nil
}

// ReadStore returns the store under home for reading only: it creates no
// folder and recovers nothing (shell completion reads it on every TAB). A
// store that does not exist has no jobs.
func ReadStore(home string) *Store {
	return &Store{home: home, jobs: filepath.Join(home, "jobs")}
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

// Load returns one job's report.
func (s *Store) Load(id string) (*Report, error) {
	if !validID(id) {
		return nil, fmt.Errorf("%w %q", ErrUnknownJob, id)
	}
	data, err := os.ReadFile(filepath.Join(s.JobDir(id), "job.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w %q (see `stratbench jobs`)", ErrUnknownJob, id)
	}
	if err != nil {
		return nil, fmt.Errorf("load job %s: %w", id, err)
	}
	r, err := decodeReport(data)
	if err != nil {
		return nil, fmt.Errorf("load job %s: job.json: %w", id, err)
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

// IDs returns the job ids, newest first.
func (s *Store) IDs() ([]string, error) {
	entries, err := os.ReadDir(s.jobs)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && validID(e.Name()) {
			ids = append(ids, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	return ids, nil
}

// List returns every job's report, newest first. Folders without a readable
// job.json (a job being created right now) are skipped.
func (s *Store) List() ([]*Report, error) {
	ids, err := s.IDs()
	if err != nil {
		return nil, err
	}
	reports := make([]*Report, 0, len(ids))
	for _, id := range ids {
		if r, err := s.Load(id); err == nil {
			reports = append(reports, r)
		}
	}
	return reports, nil
}

// followPoll is how often Logs looks for new lines of a running job.
const followPoll = 100 * time.Millisecond

// Logs calls fn for every line of job id's log. With follow, it keeps reading
// while the job runs and returns when the job has ended or ctx is done.
func (s *Store) Logs(ctx context.Context, id string, follow bool, fn func(LogLine) error) error {
	if _, err := s.Load(id); err != nil {
		return err
	}
	f, err := os.Open(filepath.Join(s.JobDir(id), "logs.jsonl"))
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
		rep, lerr := s.Load(id)
		if errors.Is(lerr, ErrUnknownJob) {
			return nil // the folder went away: a job that could not run at all
		}
		if lerr == nil && (rep.Status != StatusRunning || ownerGone(s.JobDir(id)) || unsaved(s.JobDir(id))) {
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

// ownerGone reports whether the job in dir has an owner record naming a
// stratbench that is no longer alive.
func ownerGone(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, ownerFile))
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
func unsaved(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, unsavedFile))
	return err == nil
}

// Recover cleans up after a stratbench that was killed while running jobs:
// it kills the leftover processes of their trees and marks the jobs whose
// stratbench is gone as failed. A job whose stratbench ended it but could
// not save its final report (its owner record renamed to unsavedFile) is
// marked failed too, saying so, not as killed. It returns the ids of the
// jobs it marked.
func (s *Store) Recover() ([]string, error) {
	// Sweep reports what it cleaned even when some state file was unreadable:
	// the jobs are still recovered, and the error is reported after.
	swept, sweepErr := supervisor.Sweep(filepath.Join(s.jobs, "*", "procs.json"))
	if sweepErr != nil {
		sweepErr = fmt.Errorf("recover jobs: %w", sweepErr)
	}
	killed := map[string]int{}
	for _, sw := range swept {
		killed[filepath.Dir(sw.StateFile)] = sw.Killed
	}
	owned, err := filepath.Glob(filepath.Join(s.jobs, "*", ownerFile))
	if err != nil {
		return nil, errors.Join(fmt.Errorf("recover jobs: %w", err), sweepErr)
	}
	unsavedJobs, err := filepath.Glob(filepath.Join(s.jobs, "*", unsavedFile))
	if err != nil {
		return nil, errors.Join(fmt.Errorf("recover jobs: %w", err), sweepErr)
	}
	var ids []string
	for _, path := range append(owned, unsavedJobs...) {
		dir := filepath.Dir(path)
		ended := filepath.Base(path) == unsavedFile
		if !ended && !ownerGone(dir) {
			continue // its stratbench is alive and runs it
		}
		id := filepath.Base(dir)
		if rep, err := s.Load(id); err == nil && rep.Status == StatusRunning {
			msg := "stratbench ended before the job finished (it was killed); where the run was is unknown"
			if ended {
				msg = "stratbench: the job ended, but its final report could not be saved here " +
					"(see save_errors in the report printed where it ran); its outcome is unknown here"
			}
			if n := killed[dir]; n > 0 {
				msg += fmt.Sprintf("; %d leftover worker process(es) were killed at the next start", n)
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
			if err := writeJSONAtomic(filepath.Join(dir, "job.json"), rep); err != nil {
				return ids, errors.Join(err, sweepErr)
			}
			ids = append(ids, id)
		}
		moveRecords(dir)
		os.Remove(filepath.Join(dir, reserveFile))
		os.Remove(path)
	}
	return ids, sweepErr
}

// removeWriteLeftovers removes the temporary files of the atomic writes
// of the job folder dir's JSON files (its report, its owner record, its
// process list) that a killed stratbench left there.
func removeWriteLeftovers(dir string) {
	leftovers, _ := filepath.Glob(filepath.Join(dir, atomicfile.TempPattern("*.json")))
	for _, path := range leftovers {
		os.Remove(path)
	}
}

// lastWritten is when the job in dir was last seen alive: the latest
// modification of stratbench's own files in its folder (the report, the
// logs, the records; not artifacts/, the strategy's), within [started,
// now]. A job found dead days later ended then, not at its recovery, and
// its duration is the time it ran.
func lastWritten(dir string, started, now time.Time) time.Time {
	last := started
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if info, err := e.Info(); err == nil && info.ModTime().After(last) {
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

// markUnsaved renames the owner record of the job in dir to unsavedFile.
func markUnsaved(dir string) {
	os.Rename(filepath.Join(dir, ownerFile), filepath.Join(dir, unsavedFile))
}
