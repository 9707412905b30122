package supervisor

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The bound on a tree's tasks (Limits.Tasks) has two halves. The samples
// count every thread of every process of the tree and report a processes
// violation past the limit. The kernel refuses new tasks a little further:
// the tree's init sets the pid_max of its PID namespace, which since Linux
// 6.14 belongs to the namespace (before, it is the machine's: the init then
// leaves it alone). Every task, thread or process, takes a pid in each
// namespace it lives in, so a thread leak or a fork bomb stops there,
// whatever its speed, however the samples fall, and whoever runs stratbench
// (RLIMIT_NPROC would count the tree alone only in a user namespace, and
// never binds root). The kernel's refusal is a failed clone (EAGAIN), which
// Python reports as "can't start new thread"; the run then fails at the
// next sample, as a processes violation that says threads.

const (
	// reservedPIDs is the kernel's RESERVED_PIDS: once a namespace's pid
	// numbers have wrapped around, it allocates from here up.
	reservedPIDs = 300
	// taskSlack is how far past Limits.Tasks pid_max is set: far enough
	// that the tree can pass the limit by one even after the numbers
	// wrapped (which reserves the first 300) with the init's own threads
	// holding some, so that the samples, not a failed clone, end the run.
	taskSlack = 512
	// pidMaxPath is the sysctl, read and written in the writer's own PID
	// namespace from Linux 6.14.
	pidMaxPath = "/proc/sys/kernel/pid_max"
)

// pidMaxFor returns the pid_max of the PID namespace of a tree whose tasks
// are limited to tasks.
func pidMaxFor(tasks int) int { return tasks + taskSlack }

// taskCeiling returns the most tasks a tree can have in a namespace whose
// pid_max is pidMax: the numbers 2 to pidMax-1 (the init holds 1).
func taskCeiling(pidMax int) int { return pidMax - 2 }

// pidMaxPerNamespace reports whether the running kernel keeps pid_max per
// PID namespace (Linux 6.14 and later). Before, writing it from a tree's
// init would change the machine's, which root may do: the version decides,
// never a write that could reach the host.
func pidMaxPerNamespace() bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	return kernelAtLeast(string(bytes.TrimRight(u.Release[:], "\x00")), 6, 14)
}

// kernelAtLeast reports whether release (uname -r: "6.18.44-fc-v1272")
// names version major.minor or later.
func kernelAtLeast(release string, major, minor int) bool {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return false
	}
	maj, err := strconv.Atoi(parts[0])
	if err != nil {
		return false
	}
	mn := parts[1]
	if i := strings.IndexFunc(mn, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		mn = mn[:i]
	}
	mnr, err := strconv.Atoi(mn)
	if err != nil {
		return false
	}
	return maj > major || maj == major && mnr >= minor
}

// limitPIDs sets the pid_max of the init's PID namespace, in the init,
// before it starts the program, and returns the value in force. It needs
// CAP_SYS_ADMIN over the namespace's user namespace, which the init has
// until it drops its capabilities.
func limitPIDs(pidMax int) (int, error) {
	if err := os.WriteFile(pidMaxPath, []byte(strconv.Itoa(pidMax)+"\n"), 0); err != nil {
		return 0, fmt.Errorf("set the PID namespace's pid_max: %w", err)
	}
	b, err := os.ReadFile(pidMaxPath)
	if err != nil {
		return 0, fmt.Errorf("read the PID namespace's pid_max: %w", err)
	}
	got, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || got > pidMax {
		return 0, fmt.Errorf("the PID namespace's pid_max reads %q after setting %d", b, pidMax)
	}
	return got, nil
}
