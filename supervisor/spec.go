package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// What a tree runs (Spec, Limits) and what it reports (Line, Sample,
// Violation, Result).

// Stream says where a captured line came from.
type Stream uint8

// Streams of captured lines. System lines are the supervisor's own notices
// (the truncation notice).
const (
	Stdout Stream = iota + 1
	Stderr
	System
)

func (s Stream) String() string {
	switch s {
	case Stdout:
		return "stdout"
	case Stderr:
		return "stderr"
	case System:
		return "system"
	}
	return "unknown"
}

// Line is one captured line: valid UTF-8 (invalid bytes replaced by U+FFFD),
// without its newline (nor the carriage return of a CRLF ending). A line
// longer than Limits.LineBytes is cut and ends with CutMarker; the rest of it
// is dropped. A last line without a newline is delivered at end of output.
type Line struct {
	Time   time.Time
	Stream Stream
	Text   string
}

// CutMarker ends a line that was cut at Limits.LineBytes (or at the output
// cap).
const CutMarker = " … [line cut]"

// Limits are enforced over the whole tree. Zero disables a limit.
type Limits struct {
	// MemoryBytes bounds the resident memory summed over the live processes
	// of the tree. Each process counts with its peak since the previous
	// sample (VmHWM), so an allocation freed between two samples still
	// counts. Pages shared between processes count once per process.
	MemoryBytes int64
	// Processes bounds the live processes of the tree, the program
	// included and the tree's init not. Threads and zombies do not count.
	Processes int
	// Tasks bounds the live tasks of the tree: the threads of every
	// process (a process of one thread is one task), the program's
	// included and the init's not. Beside the samples, the kernel refuses
	// new tasks past TaskCeiling(Tasks) in the tree's PID namespace (see
	// Result.TaskCeiling): a thread leak never reaches the host's pid_max.
	Tasks int
	// OutputBytes bounds the stdout+stderr bytes kept (text and newlines of
	// delivered lines); the rest is drained and discarded after one System
	// line says so.
	OutputBytes int64
	// LineBytes is the longest line kept whole; zero means 64 KiB.
	LineBytes int
}

// Spec says what to run and how.
type Spec struct {
	// Path is the program to run. It must be absolute; it is argv[0] too.
	Path string
	// Args holds the arguments after argv[0].
	Args []string
	// Env is the complete environment of the program. The Host appends one
	// variable of its own, EnvMarker; nothing of stratbench's environment
	// is passed on.
	Env []string
	// Dir is the program's working directory; empty means stratbench's own.
	Dir string
	// ExtraFiles become fds 3, 4, ... in the program; they are its only fds
	// besides stdin (/dev/null), stdout and stderr (two pipes). Start does
	// not close them: the caller closes its copies once Start returned.
	// The tree's init closes its own copies once the program runs, so end
	// of file on them depends on the tree alone.
	ExtraFiles []*os.File
	// Limits are enforced over the whole tree.
	Limits Limits
	// FileSizeBytes, when positive, is the largest file the program and
	// its descendants may write (RLIMIT_FSIZE, soft and hard, set before
	// the program starts and inherited at fork): a write past it fails
	// with EFBIG (Python ignores the SIGXFSZ that comes with it, and so
	// raises OSError). Zero means unlimited. Process.SetFileSizeLimit
	// lowers it later.
	FileSizeBytes int64
	// PrivateTmpBytes, when positive, mounts a tmpfs of that size on /tmp
	// for the tree alone, gone with the tree. The bytes it holds count as
	// the tree's memory in every sample (tmpfs pages are nobody's resident
	// memory). The tree no longer sees what the host has under /tmp: a
	// program, script or folder named by a path there is hidden (Dir stays
	// the working directory). It needs the PID-namespace tree tracking:
	// Start fails in the fallback, with an error that wraps
	// ErrPrivateTmpUnavailable.
	PrivateTmpBytes int64
	// DevShmBytes, when positive, gives the tree a private /dev/shm: a
	// tmpfs of that size mounted over the host's in the tree's mount
	// namespace, gone with the tree, the bytes it holds counted as the
	// tree's memory (as PrivateTmpBytes'). POSIX shared memory and
	// semaphores (shm_open, sem_open) live there: with it, what the tree
	// leaves there ends with the tree, instead of holding the host's
	// memory, and it cannot see or take the host's. Only with the
	// PID-namespace tree tracking; in the fallback the tree shares the
	// host's (Result.PrivateDevShm says which).
	DevShmBytes int64
	// CappedDirs are folders of the host that the tree writes into a
	// tmpfs of their own instead, mounted over each folder's path in the
	// tree's mount namespace: the kernel caps what the tree can put there
	// (ENOSPC past Bytes, and past one file or folder per 4 KiB, at most
	// 4,096), whatever the rate, and
	// the bytes they hold count as the tree's memory. The tree sees each
	// folder empty at start. When the tree has ended, before Done, their
	// content is copied into the host's folders: regular files (holes
	// kept, hard links kept as links) and folders; anything else is left
	// out, with a System line (as is what could not be written, a full
	// disk). They must be absolute, clean, apart from each other, and
	// need PrivateTmpBytes (the private /tmp's mount namespace).
	CappedDirs []CappedDir
	// TmpMounts are paths under the host's /tmp that the tree still sees,
	// at the same path, under a private /tmp: each is bind-mounted there
	// (with what lies below it), read-only unless Writable. They must be
	// absolute and symbolic-link free, strictly below /tmp, and need
	// PrivateTmpBytes.
	TmpMounts []TmpMount
	// BindMounts are files the tree sees in place of others, in its own
	// mount namespace (bindmount.go). They need the PID-namespace tree
	// tracking: Start fails in the fallback, with an error that wraps
	// ErrBindMountsUnavailable.
	BindMounts []BindMount
	// SampleInterval is the sampling period of the tree (default 20 ms).
	SampleInterval time.Duration
	// StateFile, when set, records the tree's processes (pid and start time)
	// and the supervising process, so that Sweep can kill them after
	// stratbench itself was killed. It is written atomically (a hidden
	// temporary file beside it, then a rename), at most a few times a
	// second, and removed when the tree is gone.
	StateFile string
	// runsNest says that the tree is a template's (see StartTemplate): the
	// runs forked from it nest their PID namespaces in its own, so its
	// namespace gets no pid_max (each run's gets its own).
	runsNest bool
	// Output receives every captured line, in order per stream, from the
	// supervisor's own goroutines, one call at a time; stdout and stderr are
	// two pipes, so their relative order is only as good as their arrival.
	// It must return quickly (the child blocks on a full pipe while it
	// runs) and must not wait for the Process to be Done. Nil discards the
	// lines (they still count against OutputBytes).
	Output func(Line)
}

// TmpMount is a path of the host's /tmp kept visible under a private /tmp.
type TmpMount struct {
	Path     string `json:"path"`
	Writable bool   `json:"writable,omitempty"`
}

// CappedDir is a folder of the host that the tree writes into a tmpfs of
// Bytes instead (Spec.CappedDirs).
type CappedDir struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// ErrPrivateTmpUnavailable is wrapped by Start's error when a private /tmp
// was asked for where the tree cannot have one: without the PID-namespace
// tree tracking (refused by the system, or the fallback forced).
var ErrPrivateTmpUnavailable = errors.New("a private /tmp needs the PID-namespace tree tracking")

// EnvMarker is the name of the variable the Host adds to every tree's
// environment. Its value names the supervising process and the tree.
const EnvMarker = "STRATBENCH_SUPERVISOR_TREE"

// Defaults for zero fields of Spec and Limits.
const (
	DefaultSampleInterval = 20 * time.Millisecond
	DefaultLineBytes      = 64 << 10
)

// Proc is one live process of the tree.
type Proc struct {
	PID      int // as stratbench's /proc numbers it
	PPID     int
	RSSBytes int64  // resident memory now
	Command  string // command line, read once per process (again after an exec)
}

// Sample is one view of the tree. The tree's init is not part of it.
type Sample struct {
	Time time.Time
	// MemoryBytes is the resident memory summed over the tree, peaks
	// between samples included, plus TmpBytes.
	MemoryBytes int64
	// TmpBytes is the bytes held by the tree's private mounts: its /tmp,
	// its /dev/shm and its capped folders.
	TmpBytes  int64
	Processes int
	Tasks     int    // the threads of the live processes, as Limits.Tasks counts them
	Procs     []Proc // ordered by pid
	// TreeTracking is how the tree's membership is known.
	TreeTracking TreeTracking
}

// Violation kinds.
const (
	ViolationMemory    = "memory"
	ViolationProcesses = "processes"
)

// Violation is a limit the tree broke; the supervisor killed the tree for it.
type Violation struct {
	Kind    string
	Limit   int64
	Value   int64
	Message string // for users, e.g. "process tree used 2,480,343,040 bytes of resident memory, 317.50 MiB over the 2.00 GiB limit (2,147,483,648 bytes)"
	Time    time.Time
}

// Result is how a supervised tree ended. ExitCode and Signal describe the
// program Spec started (not the tree's init).
type Result struct {
	ExitCode  int            // -1 when the program was killed by a signal
	Signal    syscall.Signal // the signal that ended the program, if any
	Violation *Violation     // set when a limit was broken
	Killed    bool           // Kill was called before the tree ended on its own
	// InitLost says that the tree's init ended before it could report how
	// the program ended: something killed it from inside the tree (only
	// the fallback allows that) or it failed. The program was killed with
	// it (by the namespace's end, or by its parent-death signal), so
	// ExitCode is -1 and Signal SIGKILL; a System line says so too.
	InitLost bool
	// TemplateLost, for a run forked from a template (Template.Fork), says
	// that the template ended while the run was in flight: the run's
	// namespace lies within the template's and was killed with it. A
	// crash of the run, not of what it ran. InitLost is set too.
	TemplateLost bool
	// PeakMemoryBytes is the largest MemoryBytes of any sample, and of the
	// tree as it stood when it was stopped for a kill.
	PeakMemoryBytes int64
	PeakProcesses   int
	PeakTasks       int
	// PrivateDevShm says that the tree had a private /dev/shm
	// (Spec.DevShmBytes).
	PrivateDevShm bool
	// TaskCeiling is the number of tasks past which the kernel refused to
	// create more in the tree's PID namespace (its pid_max, less the
	// numbers the kernel keeps back), 0 where it did not: without Tasks,
	// in the fallback, or on a kernel older than 6.14, where pid_max is
	// not per namespace and the samples alone hold the limit.
	TaskCeiling     int
	OutputBytes     int64 // bytes kept
	OutputTruncated bool
	TreeTracking    TreeTracking
}

func (s *Spec) check() error {
	switch {
	case !filepath.IsAbs(s.Path):
		return errors.New("the executable must be an absolute path")
	case s.Limits.MemoryBytes < 0 || s.Limits.Processes < 0 || s.Limits.Tasks < 0 || s.Limits.OutputBytes < 0 || s.Limits.LineBytes < 0:
		return fmt.Errorf("negative limit in %+v", s.Limits)
	case s.SampleInterval < 0:
		return fmt.Errorf("negative sample interval %v", s.SampleInterval)
	case s.FileSizeBytes < 0:
		return fmt.Errorf("negative file size limit %d", s.FileSizeBytes)
	case s.PrivateTmpBytes < 0 || s.DevShmBytes < 0:
		return fmt.Errorf("negative private /tmp size %d or /dev/shm size %d", s.PrivateTmpBytes, s.DevShmBytes)
	case len(s.TmpMounts) > 0 && s.PrivateTmpBytes == 0:
		return errors.New("paths kept under /tmp without a private /tmp")
	case len(s.CappedDirs) > 0 && s.PrivateTmpBytes == 0:
		return errors.New("capped folders without a private /tmp")
	}
	if err := checkTmpMounts(s.TmpMounts); err != nil {
		return err
	}
	if err := checkBindMounts(s.BindMounts); err != nil {
		return err
	}
	if err := checkCappedDirs(s.CappedDirs); err != nil {
		return err
	}
	for i, f := range s.ExtraFiles {
		if f == nil {
			return fmt.Errorf("extra file %d (fd %d) is nil", i, i+3)
		}
	}
	return nil
}
