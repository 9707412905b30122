package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"stratbench/internal/atomicfile"
	"stratbench/supervisor/internal/procfs"
)

// ProcID names one process: a pid is reused, a (pid, start time) pair is
// not. Records that must outlive stratbench (the processes of a tree, the
// stratbench running a job) keep one to tell later whether that process is
// still alive.
type ProcID struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"` // clock ticks after boot, from /proc/PID/stat
}

// stateRecord is the content of a state file.
type stateRecord struct {
	Version    int      `json:"version"`
	Supervisor ProcID   `json:"supervisor"` // the stratbench that supervises the tree
	Marker     string   `json:"marker"`     // the tree's EnvMarker value
	Procs      []ProcID `json:"procs"`
}

const (
	stateVersion = 1
	// stateEvery rate-limits state file writes: a fork loop must not turn
	// into a disk-write loop.
	stateEvery = 200 * time.Millisecond
	// MaxStateFile bounds what Sweep reads of a state file, and what a
	// caller of SweepRecord need read.
	MaxStateFile = 4 << 20
)

// stateWriter keeps a tree's state file up to date.
type stateWriter struct {
	path    string
	owner   ProcID
	marker  string
	dirty   bool      // the member set changed since the last write
	written time.Time // time of the last write attempt
	failed  bool      // a write failed; reported once
}

// update writes the state file when the member set changed, at most once per
// stateEvery. It returns the first write error only.
func (s *stateWriter) update(now time.Time, members map[int]*member) error {
	if !s.dirty || now.Sub(s.written) < stateEvery {
		return nil
	}
	rec := stateRecord{Version: stateVersion, Supervisor: s.owner, Marker: s.marker, Procs: make([]ProcID, 0, len(members))}
	for pid, m := range members {
		rec.Procs = append(rec.Procs, ProcID{pid, m.proc.Stat.StartTime})
	}
	slices.SortFunc(rec.Procs, func(a, b ProcID) int { return a.PID - b.PID })
	b, err := json.Marshal(rec)
	if err == nil {
		// Volatile: the processes it lists do not outlive the machine, and a
		// sync per write would slow the sampler that writes it.
		err = atomicfile.WriteFile(s.path, b, 0o600, atomicfile.Volatile)
	}
	s.written = now
	if err != nil {
		if s.failed {
			return nil
		}
		s.failed = true
		return fmt.Errorf("write state file: %w", err)
	}
	s.dirty = false
	return nil
}

// remove deletes the state file once the tree is gone.
func (s *stateWriter) remove() error {
	if err := os.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove state file: %w", err)
	}
	return nil
}

// parseState decodes and checks a state file.
func parseState(b []byte) (stateRecord, error) {
	var rec stateRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, err
	}
	switch {
	case rec.Version != stateVersion:
		return rec, fmt.Errorf("version %d, want %d", rec.Version, stateVersion)
	case rec.Supervisor.PID <= 0 || rec.Supervisor.Start == 0:
		return rec, fmt.Errorf("bad supervisor %+v", rec.Supervisor)
	case rec.Marker == "":
		return rec, errors.New("no marker")
	}
	for _, p := range rec.Procs {
		if p.PID <= 0 || p.Start == 0 {
			return rec, fmt.Errorf("bad process %+v", p)
		}
	}
	return rec, nil
}

// readState reads and parses a state file.
func readState(path string) (stateRecord, error) {
	b, err := readStateFile(path)
	if err != nil {
		return stateRecord{}, err
	}
	return parseState(b)
}

// readStateFile reads a state file, at most MaxStateFile bytes of it.
func readStateFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxStateFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxStateFile {
		return nil, fmt.Errorf("longer than %d bytes", MaxStateFile)
	}
	return b, nil
}

// Swept is one state file of a dead stratbench that Sweep cleaned up.
type Swept struct {
	StateFile string
	Killed    int // processes of that tree that were still alive and were killed
}

// sweepTimeout bounds how long Sweep waits for the leftovers of one tree to die.
const sweepTimeout = 5 * time.Second

// Sweep finds the state files matching glob whose supervising stratbench is
// no longer alive (its pid is gone or belongs to another process), kills the
// processes they record that still exist with the recorded start time, the
// processes that carry the tree's EnvMarker (they may have started after the
// last write) and the descendants of both, and removes the files. State files
// of a live stratbench are left alone. A file that cannot be read or swept is
// kept and reported in the error, which joins one error per such file; the
// files that were swept are returned all the same.
func Sweep(glob string) ([]Swept, error) {
	paths, err := filepath.Glob(glob)
	if err != nil {
		return nil, fmt.Errorf("supervisor: sweep %q: %w", glob, err)
	}
	var swept []Swept
	var errs []error
	for _, path := range paths {
		b, err := readStateFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // its live owner removed it meanwhile
		}
		var killed int
		var done bool
		if err == nil {
			killed, done, err = SweepRecord(b)
		}
		if err == nil && done {
			err = os.Remove(path)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("supervisor: sweep state file %s: %w", path, err))
			continue
		}
		if done {
			swept = append(swept, Swept{StateFile: path, Killed: killed})
		}
	}
	return swept, errors.Join(errs...)
}

// SweepRecord is Sweep for one state file whose content the caller read
// (at most MaxStateFile bytes) and removes once swept is true: it does
// nothing (swept false) when the file's stratbench is alive; otherwise it
// kills the leftovers of the tree the file records and returns how many.
// A record that does not parse is an error, and nothing is killed.
func SweepRecord(b []byte) (killed int, swept bool, err error) {
	rec, err := parseState(b)
	if err != nil {
		return 0, false, err
	}
	r := procfs.NewReader()
	if st, err := r.Stat(rec.Supervisor.PID); err == nil && st.StartTime == rec.Supervisor.Start && !st.Zombie() {
		return 0, false, nil // its stratbench is alive and looks after the tree
	}
	killed, err = sweepTree(r, rec)
	if err != nil {
		return killed, false, err
	}
	return killed, true, nil
}

// sweepTree stops and kills the leftovers of one tree until none is alive,
// and returns how many it killed.
func sweepTree(r *procfs.Reader, rec stateRecord) (int, error) {
	killed := map[ProcID]bool{}
	deadline := time.Now().Add(sweepTimeout)
	pause := time.Millisecond
	for {
		left, err := leftovers(r, rec)
		if err != nil {
			return len(killed), err
		}
		if len(left) == 0 {
			return len(killed), nil
		}
		if time.Now().After(deadline) {
			return len(killed), fmt.Errorf("%d leftover processes still alive after %v", len(left), sweepTimeout)
		}
		for _, sig := range []unix.Signal{unix.SIGSTOP, unix.SIGKILL} {
			for _, p := range left {
				if signalExact(r, p, sig) && sig == unix.SIGKILL {
					killed[p] = true
				}
			}
		}
		time.Sleep(pause)
		pause = min(2*pause, killBackoffMax)
	}
}

// leftovers returns the live processes of a dead stratbench's tree: those
// recorded with their start time, those carrying the tree's marker, and
// their descendants. Zombies among them that are our own children (we may
// be their subreaper) are reaped.
func leftovers(r *procfs.Reader, rec stateRecord) ([]ProcID, error) {
	pids, err := r.PIDs(nil)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	recorded := map[ProcID]bool{}
	for _, p := range rec.Procs {
		recorded[p] = true
	}
	stats := map[int]procfs.Stat{}
	byParent := map[int][]int{}
	var queue []int
	for _, pid := range pids {
		st, err := r.Stat(pid)
		if err != nil {
			continue
		}
		stats[pid] = st
		byParent[st.PPID] = append(byParent[st.PPID], pid)
		if recorded[ProcID{pid, st.StartTime}] {
			queue = append(queue, pid)
		} else if v, ok, err := r.Getenv(pid, EnvMarker); err == nil && ok && v == rec.Marker {
			queue = append(queue, pid)
		}
	}
	self := os.Getpid()
	seen := map[int]bool{}
	var left []ProcID
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		queue = append(queue, byParent[pid]...)
		st := stats[pid]
		if !st.Zombie() {
			left = append(left, ProcID{pid, st.StartTime})
		} else if st.PPID == self {
			var ws unix.WaitStatus
			unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		}
	}
	return left, nil
}

// signalExact sends sig to p if p is still the process with its start time,
// through a pidfd opened before the check so that a reused pid is never hit.
func signalExact(r *procfs.Reader, p ProcID, sig unix.Signal) bool {
	fd, err := unix.PidfdOpen(p.PID, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	if st, err := r.Stat(p.PID); err != nil || st.StartTime != p.Start {
		return false
	}
	return unix.PidfdSendSignal(fd, sig, nil, 0) == nil
}

// Self returns the ProcID of the calling process.
func Self() (ProcID, error) {
	st, err := procfs.NewReader().Stat(os.Getpid())
	if err != nil {
		return ProcID{}, fmt.Errorf("supervisor: read own stat: %w", err)
	}
	return ProcID{PID: st.PID, Start: st.StartTime}, nil
}

// Alive reports whether o's process is still running; a zombie is not.
func (o ProcID) Alive() bool {
	st, err := procfs.NewReader().Stat(o.PID)
	return err == nil && st.StartTime == o.Start && !st.Zombie()
}
