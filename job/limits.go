package job

import (
	"time"

	"stratbench/contract"
)

// Limits are the runtime safeguards (docs/limits.md). Users cannot change them;
// tests construct shorter ones through the Go API.
type Limits struct {
	Startup     time.Duration
	OnData      time.Duration
	OnExecution time.Duration
	OnFinish    time.Duration
	MemoryBytes int64
	Processes   int
	// Tasks bounds the tree's tasks, threads included (see
	// supervisor.Limits.Tasks); zero means no bound.
	Tasks        int
	MessageBytes int
	LogBytes     int64

	// Disk caps of the job folder. Zero means the default; see
	// DefaultLimits for the values and the reasons.

	// RecordBytes caps each of the driver's record files (equity.csv,
	// trades.csv, orders.csv), its cut notice included.
	RecordBytes int64
	// LogFileBytes caps logs.jsonl, its cut notice included.
	LogFileBytes int64
	// ArtifactFileBytes caps each file the worker's tree writes
	// (RLIMIT_FSIZE: a write past it fails with EFBIG).
	ArtifactFileBytes int64
	// ArtifactsBytes caps the disk space of the strategy's own files in the
	// job folder (artifacts/). Sandboxed, the folder is a tmpfs of that
	// size until the tree ends (see artifacts.go); otherwise it is
	// checked every ArtifactsCheck while the worker runs and once when
	// it has ended, and over it no file of the tree may grow any more.
	ArtifactsBytes int64
	// ArtifactsCheck is the period of that check.
	ArtifactsCheck time.Duration
	// SandboxTmpBytes is the size of a sandboxed worker's private /tmp, a
	// tmpfs whose usage counts as the tree's memory.
	SandboxTmpBytes int64
	// DevShmBytes is the size of the tree's private /dev/shm (where it
	// has a mount namespace: supervisor.Spec.DevShmBytes), a tmpfs whose
	// usage counts as the tree's memory.
	DevShmBytes int64
	// DebugIdle is how long the debugger's prompt may wait for a person's
	// command (the hook's time limit paused meanwhile) before the run
	// ends; zero means the default.
	DebugIdle time.Duration
}

// DefaultLimits returns the limits the README and docs/limits.md list.
func DefaultLimits() Limits {
	return Limits{
		Startup:     30 * time.Second,
		OnData:      5 * time.Second,
		OnExecution: 5 * time.Second,
		OnFinish:    60 * time.Second,
		MemoryBytes: 2 << 30,
		Processes:   32,
		// A thread leak stops here, far below a machine's pid_max (32,768
		// by default, 4,194,304 with systemd), while numpy, pandas or
		// pyarrow each start a thread per core: a few hundred at most.
		Tasks:        2048,
		MessageBytes: 8 << 20,
		LogBytes:     64 << 20,
		// A record file is one line per event, trade or order record (40
		// to 150 bytes): 256 MiB holds the equity of about 4 million
		// events, or 2 million order records, and cuts a runaway order
		// loop (50,000 rejected orders a bar write 10 MB a bar) within
		// seconds.
		RecordBytes: 256 << 20,
		// logs.jsonl stores each line of output as a JSON object: about
		// 70 bytes more than the line, and up to 6 bytes for each escaped
		// byte. 8 times the output cap keeps all 64 MiB of output for lines
		// of 10 bytes or more on average (30 or more when every byte is a
		// control character).
		LogFileBytes: 8 * (64 << 20),
		// The strategy's own files: as much as its memory limit, in one
		// file or in all of them.
		ArtifactFileBytes: 1 << 30,
		ArtifactsBytes:    2 << 30,
		ArtifactsCheck:    time.Second,
		// Room for temporary files of data-analysis libraries, small
		// beside the 2 GiB of memory it counts toward.
		SandboxTmpBytes: 256 << 20,
		// POSIX shared memory and semaphores (multiprocessing's
		// shared_memory, sem_open): as much as the sandbox's /tmp.
		DevShmBytes: 256 << 20,
		// A person who left the workbench stopped at a prompt: the run
		// ends rather than hold its worker's memory for good.
		DebugIdle: 10 * time.Minute,
	}
}

// HookLimit returns the time limit of a hook (startup included), and false
// for a name that is no hook: there is no limit to fall back on.
func (l Limits) HookLimit(hook contract.Hook) (time.Duration, bool) {
	switch hook {
	case contract.HookStartup:
		return l.Startup, true
	case contract.HookOnData, contract.HookOnBars:
		// on_bars is on_data's limit, per call (one call per timestamp).
		return l.OnData, true
	case contract.HookOnExecution:
		return l.OnExecution, true
	case contract.HookOnFinish:
		return l.OnFinish, true
	}
	return 0, false
}
