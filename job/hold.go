package job

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"stratbench/internal/nofollow"
)

// Hold is a command's claim on a folder of the home that it still uses: a
// job folder from its creation until the command is done with it (a --ci
// run's until it has printed its report and written its --report), the
// scratch folder of a check while it runs. It is a shared flock(2) lock
// on the folder's descriptor, so the kernel drops it when the process
// ends, however it ends (SIGKILL too): no claim outlives its command, and
// no record of one needs reading. Retention and prune remove a job folder
// only under an exclusive lock, which a hold refuses (RemoveEnded).
type Hold struct {
	dir  *nofollow.Dir
	once sync.Once
}

// HoldFolder holds the folder at path (its last component not a link).
func HoldFolder(path string) (*Hold, error) {
	dir, err := nofollow.Open(path)
	if err != nil {
		return nil, fmt.Errorf("hold %s: %w", path, err)
	}
	return hold(dir, path)
}

// hold takes the shared lock of dir (named what in errors), or closes it.
func hold(dir *nofollow.Dir, what string) (*Hold, error) {
	if err := dir.TryLock(false); err != nil {
		dir.Close()
		return nil, fmt.Errorf("hold %s: %w", what, err)
	}
	return &Hold{dir: dir}, nil
}

// HoldJob holds the folder of job id, opened as OpenJob opens it (by the
// id, never through a link). A folder that retention or prune is removing
// (under its exclusive lock) is refused with an error wrapping
// nofollow.ErrLocked.
func (s *Store) HoldJob(id string) (*Hold, error) {
	dir, err := s.openJob(id)
	if err != nil {
		return nil, err
	}
	return hold(dir, "job "+id)
}

// Dir returns the held folder's descriptor, to work in the folder without
// following a link that replaced it.
func (h *Hold) Dir() *nofollow.Dir { return h.dir }

// Path returns the folder's path.
func (h *Hold) Path() string { return h.dir.Path() }

// Release lets go of the folder; further calls do nothing.
func (h *Hold) Release() { h.once.Do(func() { h.dir.Close() }) }

// Why RemoveEnded leaves a job.
var (
	ErrInUse   = errors.New("a stratbench still uses it")
	ErrKept    = errors.New("it is marked with `stratbench keep`")
	ErrRunning = errors.New("it is running")
)

// RemoveEnded removes the folder of job id as Remove does, after looking
// at it again right before: retention and prune decide from a listing,
// and a job may be marked to keep, or still be used by the command that
// ran it, by the time they act. It takes an exclusive lock on the folder
// without waiting and holds it while it removes: a job that a command
// holds (Hold) is left with ErrInUse; one marked to keep with ErrKept;
// one whose report does not say it ended with ErrRunning (one whose
// job.json is not its report with that *RecordError: nothing is decided
// from it).
func (s *Store) RemoveEnded(id string) error {
	if !validID(id) {
		return fmt.Errorf("%w %q", ErrUnknownJob, id)
	}
	jobs, err := s.openJobs()
	if err != nil {
		return fmt.Errorf("remove job %s: %w", id, err)
	}
	defer jobs.Close()
	dir, err := jobs.Sub(id)
	if err != nil {
		return fmt.Errorf("remove job %s: %w", id, err)
	}
	defer dir.Close()
	if err := dir.TryLock(true); errors.Is(err, nofollow.ErrLocked) {
		return fmt.Errorf("job %s: %w", id, ErrInUse)
	} else if err != nil {
		return fmt.Errorf("remove job %s: %w", id, err)
	}
	rep, err := ReadReport(dir, id)
	switch {
	case err != nil:
		return fmt.Errorf("remove job %s: %w", id, err)
	case rep.Status == StatusRunning || rep.FinishedAt == nil:
		return fmt.Errorf("job %s: %w", id, ErrRunning)
	case isKept(dir):
		return fmt.Errorf("job %s: %w", id, ErrKept)
	}
	if err := jobs.RemoveAll(id); err != nil {
		return fmt.Errorf("remove job %s: %w", id, err)
	}
	return nil
}

// tmpDir names the home's folder of scratch folders: a check's cut data
// copies and its replays' jobs.
const tmpDir = "tmp"

// leftoverAfter is how long a scratch folder must have lain unchanged, as
// well as unheld, before RemoveLeftovers takes it for a dead command's:
// HoldTemp holds it a moment after it makes it.
const leftoverAfter = time.Minute

// HoldTemp makes a new scratch folder under the home's tmp/, named
// prefix and random characters, and holds it. The caller removes it when
// done; a command killed before leaves it to RemoveLeftovers.
func (s *Store) HoldTemp(prefix string) (*Hold, error) {
	tmp := filepath.Join(s.home, tmpDir)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("make a scratch folder: %w", err)
	}
	d, err := nofollow.Open(tmp) // tmp/ itself is no link
	if err != nil {
		return nil, fmt.Errorf("make a scratch folder: %w", err)
	}
	d.Close()
	path, err := os.MkdirTemp(tmp, prefix)
	if err != nil {
		return nil, fmt.Errorf("make a scratch folder: %w", err)
	}
	h, err := HoldFolder(path)
	if err != nil {
		os.RemoveAll(path)
		return nil, err
	}
	return h, nil
}

// RemoveLeftovers removes the scratch folders under the home's tmp/ that
// no command holds (theirs was killed) and that have not changed for
// leftoverAfter, each under an exclusive lock, and returns how many it
// removed.
func (s *Store) RemoveLeftovers() (int, error) {
	tmp, err := nofollow.Open(filepath.Join(s.home, tmpDir))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("scratch folders: %w", err)
	}
	defer tmp.Close()
	entries, err := tmp.Entries()
	if err != nil {
		return 0, fmt.Errorf("scratch folders: %w", err)
	}
	cutoff := time.Now().Add(-leftoverAfter)
	removed := 0
	for _, e := range entries {
		if !e.Type().IsDir() {
			continue
		}
		gone, err := removeUnheld(tmp, e.Name(), cutoff)
		if err != nil {
			return removed, fmt.Errorf("scratch folders: %w", err)
		}
		if gone {
			removed++
		}
	}
	return removed, nil
}

// removeUnheld removes the folder name in dir unless a command holds it
// or it changed after cutoff.
func removeUnheld(dir *nofollow.Dir, name string, cutoff time.Time) (bool, error) {
	sub, err := dir.Sub(name)
	if err != nil {
		return false, nil // gone, or no folder
	}
	defer sub.Close()
	if sub.TryLock(true) != nil {
		return false, nil // held: its command runs
	}
	if info, err := dir.Lstat(name); err != nil || !info.ModTime().Before(cutoff) {
		return false, nil
	}
	if err := dir.RemoveAll(name); err != nil {
		return false, err
	}
	return true, nil
}
