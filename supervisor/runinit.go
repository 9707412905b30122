package supervisor

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The run init is the root of a run forked from a template (Template.Fork):
// PID 1 of the run's own PID namespace. The template's program makes the
// namespace; its first process forks the run's program (which goes on as a
// copy of the template) and then executes stratbench as the run init, with
// runInitArg, its control socket at runInitFD and the program's pid (in the
// new namespace) as arguments. From then on it does what a tree's init does
// once its child runs, with the same protocol on the control socket (see
// init.go, from "started" on): stop signals are passed on, every orphan of
// the namespace is reaped, and its end ends the namespace. It reads no
// config: the program set itself up before the run init was executed.

// runInitArg is argv[1] of a process that must run as a run's init.
const runInitArg = "__stratbench_run_init"

// runInitFD is the run init's control socket.
const runInitFD = 3

func isRunInit(args []string) bool { return len(args) > 1 && args[1] == runInitArg }

// runInitArgs returns the arguments of a run init, but the program's pid,
// which the template appends.
func runInitArgs() []string {
	return []string{"stratbench-run-init", runInitArg, strconv.Itoa(runInitFD)}
}

func runRunInit(args []string) int {
	if len(args) != 2 {
		fmt.Fprintf(os.Stderr, "stratbench run init: want the control fd and the program's pid, got %q\n", args)
		return initExitCode
	}
	ctl, err := strconv.Atoi(args[0])
	if err != nil || ctl < 3 {
		fmt.Fprintf(os.Stderr, "stratbench run init: bad control fd %q\n", args[0])
		return initExitCode
	}
	in := &initProc{ctl: ctl, tracking: TrackingPIDNamespace, child: -1, childFD: -1}
	child, err := strconv.Atoi(args[1])
	if err != nil || child <= 1 {
		return in.fail(fmt.Errorf("bad program pid %q", args[1]))
	}
	// The template may have left any descriptor here: keep stdio and
	// the control socket only, of those it left (see closeInherited).
	if err := closeInherited(ctl); err != nil {
		return in.fail(fmt.Errorf("close inherited fds: %w", err))
	}
	// As in the tree's init: the program runs as our uid and must not
	// reach us. (The template, which made our user namespace, can: the
	// host counts our memory in the run for that reason.)
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return in.fail(fmt.Errorf("set non-dumpable: %w", err))
	}
	if os.Getpid() != 1 {
		return in.fail(fmt.Errorf("not the first process of a PID namespace (pid %d)", os.Getpid()))
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, append(forwardedSignals, fatalSignals...)...)
	// The program must be our child: a pidfd names it from now on, and
	// waitid on it fails with ECHILD for any process that is not.
	fd, err := unix.PidfdOpen(child, 0)
	if err != nil {
		return in.fail(fmt.Errorf("pidfd of the program %d: %w", child, err))
	}
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil); err != nil {
		unix.Close(fd)
		if errors.Is(err, unix.ECHILD) {
			return in.fail(fmt.Errorf("the program %d is not our child", child))
		}
		return in.fail(fmt.Errorf("waitid on the program %d: %w", child, err))
	}
	in.child, in.childFD = child, fd
	// The template's first process of the namespace mounted a /proc of
	// the namespace where the kernel let it (as the tree's init does for
	// its child): there, we are 1.
	if self, err := os.Readlink("/proc/self"); err == nil && self == "1" {
		in.procMounted = true
	}
	// The pid_max in force in our namespace (the template sets it, as the
	// host asked: see tasks.go), which the host checks. The sysctl is the
	// reader's own namespace's whichever /proc it is read through; before
	// Linux 6.14 it is the machine's, and the host asked for none.
	if b, err := os.ReadFile(pidMaxPath); err == nil {
		in.pidMax, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	in.releaseChildFDs()
	return in.serve(sigs)
}

// closeInherited closes every descriptor from 3 up that came across execve,
// but keep. Only those: by now the Go runtime and the package init functions
// of the executable have run, and the descriptors they opened are theirs.
// Among them is the runtime's network poller (an epoll instance and an
// eventfd), opened as soon as an init function opens a file or starts a
// timer (google.golang.org/protobuf, which stratbench links, hashes the
// executable at init); closed under the runtime, it kills the process at
// its next poll ("runtime: netpoll failed"), and the run's init ends before
// or after it reported.
//
// The kernel tells the two apart: execve closed every descriptor that was
// close-on-exec, so the inherited ones are not, and everything the runtime
// and the standard library open is. The numbers come from /proc/self/fd,
// which the template's process mounted: a listing that hides a descriptor
// leaves it open here, which gives the template nothing it does not have
// (it holds whatever it passed us as long as it likes, and the run cannot
// reach us); the flags that decide are read from the kernel.
func closeInherited(keep int) error {
	dir, err := os.Open("/proc/self/fd")
	if err != nil {
		return err
	}
	names, err := dir.Readdirnames(-1)
	dir.Close()
	if err != nil {
		return err
	}
	for _, name := range names {
		fd, err := strconv.Atoi(name)
		if err != nil || fd < 3 || fd == keep {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil {
			continue // the directory's own descriptor, closed above
		}
		if flags&unix.FD_CLOEXEC == 0 {
			unix.Close(fd)
		}
	}
	return nil
}
