package supervisor

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// TreeTracking says how the supervisor knows which processes belong to a
// tree.
type TreeTracking uint8

// Tree tracking modes.
const (
	// TrackingPIDNamespace: the tree lives in its own PID namespace whose
	// PID 1 is the supervisor's init. Membership is a kernel fact: every
	// process of the namespace descends from the init whatever it does
	// with sessions, process groups or its environment, and the namespace
	// dies with the init. The tree has its own mount namespace (its /proc
	// and private mounts) and IPC namespace too: System V shared memory,
	// message queues and semaphores, and POSIX message queues, are the
	// tree's alone and die with it.
	TrackingPIDNamespace TreeTracking = iota + 1
	// TrackingFallback: namespaces were refused (or the fallback was
	// forced). The init runs as a child subreaper: orphans of the tree are
	// reparented to it and stay its descendants. Only if the init itself
	// is killed from inside the tree do its orphans go to stratbench,
	// which then attributes them by EnvMarker.
	TrackingFallback
)

func (k TreeTracking) String() string {
	switch k {
	case TrackingPIDNamespace:
		return "pidns"
	case TrackingFallback:
		return "fallback"
	}
	return "unknown"
}

// TrackingEnv is the variable that chooses the tree tracking: "" or "auto"
// uses a PID namespace where the system allows one and the fallback
// elsewhere; "fallback" forces the fallback (tests use it). NewHost refuses
// any other value.
const TrackingEnv = "STRATBENCH_TREE_TRACKING"

// trackingFromEnv reads TrackingEnv: it returns whether the fallback is
// forced.
func trackingFromEnv() (forceFallback bool, err error) {
	switch v := os.Getenv(TrackingEnv); strings.ToLower(strings.TrimSpace(v)) {
	case "", "auto":
		return false, nil
	case "fallback":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: want \"auto\" (or empty) or \"fallback\"", TrackingEnv, v)
	}
}

// nsAttempt is one way to start the init in namespaces of its own.
type nsAttempt struct {
	name string // for errors
	attr func(*syscall.SysProcAttr)
}

// nsAttempts lists the ways to try, in order, for a stratbench running with
// effective uid euid and gid egid.
//
// Each attempt makes a PID, a mount and an IPC namespace: SysV objects
// outlive every process that made them (a 256 MiB segment and its memory
// stayed after a run ended) but not their IPC namespace, which ends with
// its last process, the init.
//
// Root may create the namespaces directly. Anyone else needs a user
// namespace first: the new PID namespace is then owned by it, and the init
// holds CAP_SYS_ADMIN there only (enough to mount /proc and a tmpfs in its
// own mount namespace, nothing on the host). The user namespace maps our
// own uid and gid to themselves and nothing else, so files keep their owners
// and the tree keeps exactly stratbench's rights; setgroups is denied, as the
// kernel requires for a gid map written by an unprivileged process. Root
// whose direct attempt is refused (a container without CAP_SYS_ADMIN) tries
// the user namespace too.
func nsAttempts(euid, egid int) []nsAttempt {
	withUser := nsAttempt{name: "user, PID, mount and IPC namespaces", attr: func(a *syscall.SysProcAttr) {
		a.Cloneflags = unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNS | unix.CLONE_NEWIPC
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: euid, HostID: euid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: egid, HostID: egid, Size: 1}}
		a.GidMappingsEnableSetgroups = false
		// A non-root process loses its capabilities at execve unless
		// they are ambient; the init needs CAP_SYS_ADMIN (in its user
		// namespace) for its mounts, and drops it before it starts the
		// child.
		a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
	}}
	if euid != 0 {
		return []nsAttempt{withUser}
	}
	pidOnly := nsAttempt{name: "PID, mount and IPC namespaces", attr: func(a *syscall.SysProcAttr) {
		a.Cloneflags = unix.CLONE_NEWPID | unix.CLONE_NEWNS | unix.CLONE_NEWIPC
	}}
	return []nsAttempt{pidOnly, withUser}
}

// nsRefused reports whether err, from starting the init, says that the
// system refuses the namespaces: EPERM (no privilege, a seccomp profile,
// kernel.unprivileged_userns_clone=0, an LSM such as AppArmor's userns
// restriction), EACCES (an LSM), EINVAL (a kernel without the namespace
// type), ENOSPC or EUSERS (user.max_user_namespaces or
// user.max_pid_namespaces reached, or nesting too deep).
func nsRefused(err error) bool {
	for _, e := range []error{unix.EPERM, unix.EACCES, unix.EINVAL, unix.ENOSPC, unix.EUSERS} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
