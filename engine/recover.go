package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"stratbench/contract"
	"stratbench/internal/atomicfile"
	"stratbench/internal/nofollow"
	"stratbench/job"
	"stratbench/supervisor"
)

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

// RunnerGone reports whether nothing runs the job in the folder dir any
// more although its report may still say running: the stratbench that ran
// it is gone, or ended it without saving its final report. It is how
// job.Store.Logs follows a job (job.Follow).
func RunnerGone(dir *nofollow.Dir) bool { return ownerGone(dir) || unsaved(dir) }

// Recover cleans up after a stratbench that was killed while running jobs:
// it kills the leftover processes of their trees and marks the jobs whose
// stratbench is gone as failed. A job whose stratbench ended it but could
// not save its final report (its owner record renamed to unsavedFile) is
// marked failed too, saying so, not as killed. It returns the ids of the
// jobs it marked.
//
// It looks only at the job folders of the jobs folder (job.Store.Folders),
// each opened from the jobs folder's descriptor, and reads, writes, moves and removes
// in each through that descriptor without following a link (nofollow): a
// job folder that is a link, or a link in one, never takes it elsewhere.
func Recover(s *job.Store) ([]string, error) {
	var ids []string
	// The process trees' errors are reported after: the jobs are still
	// recovered.
	var sweepErrs []error
	var stop error // recoverJob's, which ends the walk
	err := s.Folders(func(dir *nofollow.Dir, id string) error {
		marked, sweepErr, err := recoverJob(dir, id)
		if sweepErr != nil {
			sweepErrs = append(sweepErrs, fmt.Errorf("recover jobs: %w", sweepErr))
		}
		if err != nil {
			stop = err
			return err
		}
		if marked {
			ids = append(ids, id)
		}
		return nil
	})
	if stop != nil {
		return ids, errors.Join(append([]error{stop}, sweepErrs...)...)
	}
	if err != nil {
		return nil, fmt.Errorf("recover jobs: %w", err)
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
	rep, lerr := job.ReadReport(dir, id)
	var re *job.RecordError
	if errors.As(lerr, &re) {
		// Its job.json is not its report (another job's, or a record
		// naming another path): nothing is done by what it says, and
		// the folder is left as it is (listings say why).
		return false, sweepErr, nil
	}
	if lerr == nil && rep.Status == job.StatusRunning {
		msg := "stratbench ended before the job finished (it was killed); where the run was is unknown"
		if ended {
			msg = "stratbench: the job ended, but its final report could not be saved here " +
				"(see save_errors in the report printed where it ran); its outcome is unknown here"
		}
		if killed > 0 {
			msg += fmt.Sprintf("; %d leftover worker process(es) were killed at the next start", killed)
		}
		rep.Status = job.StatusFailed
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
	latest := func(d *nofollow.Dir) {
		entries, _ := d.Entries()
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			if info, err := d.Lstat(e.Name()); err == nil && info.Mode().IsRegular() && info.ModTime().After(last) {
				last = info.ModTime()
			}
		}
	}
	latest(dir)
	if records, err := dir.Sub(job.RecordsDir); err == nil {
		latest(records)
		records.Close()
	}
	if last.After(now) {
		return now
	}
	return last
}

// unsavedFile replaces the owner record of a job whose stratbench ended it
// but could not write its final report (a full disk, say). Renaming needs
// no free space, so the record is kept where the report could not be:
// Recover tells such a job from one whose stratbench died while
// running it, which still has its owner record.
const unsavedFile = "unsaved.json"

// procsFile is the state record of a job's process tree in its folder
// (supervisor's): what Recover sweeps.
const procsFile = "procs.json"

// markUnsaved renames the owner record of the job in dir to unsavedFile.
func markUnsaved(dir string) {
	os.Rename(filepath.Join(dir, ownerFile), filepath.Join(dir, unsavedFile))
}
