package job

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"stratbench/internal/nofollow"
)

// Budget is how much of its jobs the home keeps (docs/commands.md, "The
// home"): the most recent jobs that retention may remove, as many as fit
// in both bounds. Jobs that it never removes (running, marked to keep, a
// run of a sweep still kept) neither count nor go; the job that just ran
// counts but never goes.
type Budget struct {
	Jobs  int   // at most this many jobs; 0: no bound
	Bytes int64 // at most this many bytes of their folders; 0: no bound
}

// Default budget: 500 jobs, 1 GiB. The bundled example's week takes about
// 300 KB a job, so the count binds first for runs of that size; a year of
// minute bars (about 525,000 events, some 7.5 MB of records) is held to
// about 140 jobs by the bytes.
const (
	DefaultKeepJobs  = 500
	DefaultKeepBytes = 1 << 30
)

// DefaultBudget returns the budget of a home without STRATBENCH_KEEP.
func DefaultBudget() Budget { return Budget{Jobs: DefaultKeepJobs, Bytes: DefaultKeepBytes} }

// Unbounded reports whether the budget keeps every job ("all").
func (b Budget) Unbounded() bool { return b.Jobs == 0 && b.Bytes == 0 }

// BudgetError is a STRATBENCH_KEEP that does not parse.
type BudgetError struct {
	Value string
	Err   error
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("STRATBENCH_KEEP=%q: %v (write a number of jobs, a size, or both: 500, 2GiB, 500,2GiB; or all)",
		e.Value, e.Err)
}

func (e *BudgetError) Unwrap() error { return e.Err }

// ParseBudget reads a budget as STRATBENCH_KEEP writes it: "" (the
// default), "all" (keep every job), a number of jobs ("500"), a size
// ("2GiB", "800MB": units B, KB, MB, GB, TB in powers of 1000, KiB, MiB,
// GiB, TiB in powers of 1024), or both, comma-separated ("500,2GiB").
// With only one of the two, the other is its default.
func ParseBudget(s string) (Budget, error) {
	s = strings.TrimSpace(s)
	b := DefaultBudget()
	switch strings.ToLower(s) {
	case "":
		return b, nil
	case "all":
		return Budget{}, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > 2 {
		return Budget{}, &BudgetError{s, errors.New("more than two parts")}
	}
	var haveJobs, haveBytes bool
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			return Budget{}, &BudgetError{s, errors.New("an empty part")}
		}
		if n, err := strconv.Atoi(p); err == nil {
			if haveJobs {
				return Budget{}, &BudgetError{s, errors.New("two numbers of jobs")}
			}
			if n < 1 {
				return Budget{}, &BudgetError{s, fmt.Errorf("%d jobs: keep at least 1", n)}
			}
			b.Jobs, haveJobs = n, true
			continue
		}
		n, err := parseSize(p)
		if err != nil {
			return Budget{}, &BudgetError{s, err}
		}
		if haveBytes {
			return Budget{}, &BudgetError{s, errors.New("two sizes")}
		}
		b.Bytes, haveBytes = n, true
	}
	return b, nil
}

// parseSize reads a size: a number, then one of the units.
func parseSize(s string) (int64, error) {
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return 0, fmt.Errorf("%q is neither a number of jobs nor a size", s)
	}
	num, unit := s[:i], strings.TrimSpace(s[i:])
	mult := map[string]float64{"b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}[strings.ToLower(unit)]
	if mult == 0 {
		return 0, fmt.Errorf("%q: unknown unit %q (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)", s, unit)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size", s)
	}
	n := f * mult
	switch {
	case n < 1<<20:
		return 0, fmt.Errorf("%s: keep at least 1 MiB", s)
	case n > math.MaxInt64/2:
		return 0, fmt.Errorf("%s is too large", s)
	}
	return int64(n), nil
}

// keepFile marks a job folder as kept (`stratbench keep`): retention and
// prune leave it. It is an empty file; only its being a regular file of
// the folder counts.
const keepFile = "keep"

// Keep marks job id to be kept.
func (s *Store) Keep(id string) error {
	dir, err := s.openJob(id)
	if err != nil {
		return err
	}
	defer dir.Close()
	// Marked under a shared lock: a prune or retention removing the job
	// (RemoveEnded, under an exclusive one) either sees the mark or has
	// removed the folder before it is made, and then the mark fails.
	if err := lockShared(dir); err != nil {
		return fmt.Errorf("keep %s: %w", id, err)
	}
	if _, err := ReadReport(dir, id); err != nil {
		return err
	}
	f, err := dir.OpenFile(keepFile, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("keep %s: %w", id, err)
	}
	return f.Close()
}

// lockWait bounds how long lockShared waits for a removal to end.
const lockWait = 10 * time.Second

// lockShared takes a shared lock on the job folder dir, waiting while
// RemoveEnded holds its exclusive one.
func lockShared(dir *nofollow.Dir) error {
	deadline := time.Now().Add(lockWait)
	for {
		err := dir.TryLock(false)
		if !errors.Is(err, nofollow.ErrLocked) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Unkeep removes job id's mark; a job without one is left as it is.
func (s *Store) Unkeep(id string) error {
	dir, err := s.openJob(id)
	if err != nil {
		return err
	}
	defer dir.Close()
	if err := dir.Remove(keepFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("unkeep %s: %w", id, err)
	}
	return nil
}

// isKept reports whether the job folder dir is marked to keep.
func isKept(dir *nofollow.Dir) bool {
	info, err := dir.Lstat(keepFile)
	return err == nil && info.Mode().IsRegular()
}

// maxFolderDepth bounds how deep folderBytes descends in a job folder (the
// strategy makes the folders of artifacts/).
const maxFolderDepth = 32

// FolderBytes returns the size of the files under the folder at path
// (links counted as links, nothing followed; a folder that is a link or
// cannot be read counts 0), for listings of the home.
func FolderBytes(path string) int64 {
	dir, err := nofollow.Open(path)
	if err != nil {
		return 0
	}
	defer dir.Close()
	return folderBytes(dir, maxFolderDepth)
}

// folderBytes returns the size of the regular files under dir (links
// counted as links, nothing followed), descending at most depth folders.
func folderBytes(dir *nofollow.Dir, depth int) int64 {
	entries, err := dir.Entries()
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range entries {
		switch {
		case e.Type().IsDir() && depth > 0:
			if sub, err := dir.Sub(e.Name()); err == nil {
				n += folderBytes(sub, depth-1)
				sub.Close()
			}
		case !e.Type().IsDir():
			if info, err := dir.Lstat(e.Name()); err == nil {
				n += info.Size()
			}
		}
	}
	return n
}

// Folder is a job of the home as retention and prune see it.
type Folder struct {
	ID     string
	Report *Report // the part listings use (listed.go); Store.Load reads it whole
	Bytes  int64   // the size of the files in its folder
	Kept   bool    // marked with `stratbench keep`
}

// JobFolders returns the jobs of the home whose job.json is their report,
// newest first, with their sizes and marks (those whose job.json is not
// their report are in bad, for the caller to say so: nothing acts on
// them).
//
// Each report is the part of it that listings use (listed.go: no
// traceback, metadata or figures per symbol), read one at a time: memory
// is about a KiB a job whatever the job.json files hold.
func (s *Store) JobFolders() (jobs []Folder, bad []*RecordError, err error) {
	var rr reportReader
	err = s.Folders(func(dir *nofollow.Dir, id string) error {
		rep, err := rr.read(dir, id)
		var re *RecordError
		switch {
		case errors.As(err, &re):
			bad = append(bad, re)
			return nil
		case err != nil:
			return nil // a job being created right now
		}
		jobs = append(jobs, Folder{ID: id, Report: rep, Bytes: folderBytes(dir, maxFolderDepth), Kept: isKept(dir)})
		return nil
	})
	return jobs, bad, err
}

// Removable reports whether retention or prune may remove the job: it has
// ended (a job that says running is never removed, also one whose
// stratbench died: the next start marks it failed) and is not marked to
// keep.
func (f Folder) Removable() bool {
	return f.Report.Status != StatusRunning && f.Report.FinishedAt != nil && !f.Kept
}

// Over returns the jobs of jobs (newest first, as JobFolders gives them)
// that do not fit in the budget: the most recent removable ones are kept
// while they fit in both bounds, the older ones go. Jobs that are not
// removable, or that apart says are kept apart (the runs of a sweep still
// kept: they go with their sweep), neither count nor go. Job ran (the job
// that just ran) counts but never goes.
func (b Budget) Over(jobs []Folder, apart func(Folder) bool, ran string) []Folder {
	if b.Unbounded() {
		return nil
	}
	var over []Folder
	count, bytes, full := 0, int64(0), false
	for _, f := range jobs {
		if !f.Removable() || apart != nil && apart(f) {
			continue
		}
		count++
		bytes += f.Bytes
		if full || b.Jobs > 0 && count > b.Jobs || b.Bytes > 0 && bytes > b.Bytes {
			full = true
			if f.ID != ran {
				over = append(over, f)
			}
		}
	}
	return over
}
