//go:build linux && amd64

package sandbox

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"syscall"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// init keeps the launcher's main goroutine on the main OS thread. seccomp
// without TSYNC filters one thread, and it must be the thread that calls
// execve: on another thread the program escapes the filter.
func init() {
	if isLauncher(os.Args) {
		runtime.LockOSThread()
	}
}

func isLauncher(args []string) bool { return len(args) > 1 && args[1] == launcherArg }

// MaybeRunLauncher runs the launcher when this process was started as one
// (by a Command) and otherwise returns at once. Call it first thing in main,
// and in TestMain of tests that start sandboxed programs. When it launched,
// it never returns: the process becomes the program, or exits with ExitCode.
func MaybeRunLauncher() {
	if !isLauncher(os.Args) {
		return
	}
	l, err := prepare(os.Args[2:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "stratbench sandbox: %v\n", err)
		os.Exit(ExitCode)
	}
	step, errno := l.exec()
	rawStderr("stratbench sandbox: ", step, ": ", errno.Error(), "\n")
	unix.Exit(ExitCode)
}

// launch is a prepared launch: what exec needs, built while allocating was
// still safe.
type launch struct {
	addressSpace uint64
	fprogs       []unix.SockFprog // each points into its own filter array
	path         *byte
	argv, envp   []*byte
	execStep     string // "execute <program>", built in advance
}

// prepare parses the launcher's arguments, pre-builds everything exec needs
// and applies every restriction that may allocate: descriptors,
// no_new_privs, capabilities, Landlock, RLIMIT_CORE and RLIMIT_NOFILE.
func prepare(args []string) (*launch, error) {
	p, path, argv, err := parseLauncherArgs(args)
	if err != nil {
		return nil, err
	}
	// Descriptors this process inherited without close-on-exec would
	// otherwise reach the program (runc CVE-2024-21626 was such a leak).
	if err := unix.CloseRange(uint(p.KeepFDs), ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return nil, fmt.Errorf("mark descriptors from %d close-on-exec: %w", p.KeepFDs, err)
	}
	abi, err := landlockABI()
	if err != nil {
		return nil, fmt.Errorf("refusing to run: %w", err)
	}
	if abi < minLandlockABI {
		return nil, fmt.Errorf("refusing to run: Landlock ABI %d found, %d or later is needed", abi, minLandlockABI)
	}

	// Everything that allocates happens before RLIMIT_AS: the Go runtime
	// has reserved more address space than the limit, and a heap growth
	// after it is fatal.
	l := &launch{addressSpace: uint64(p.AddressSpaceBytes), execStep: "execute " + path}
	progs, err := filterPrograms()
	if err != nil {
		return nil, err
	}
	filters, err := sockFilters(progs)
	if err != nil {
		return nil, err
	}
	l.fprogs = make([]unix.SockFprog, len(filters))
	for i, f := range filters {
		l.fprogs[i] = unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	}
	if l.path, err = unix.BytePtrFromString(path); err != nil {
		return nil, fmt.Errorf("program path: %w", err)
	}
	if l.argv, err = syscall.SlicePtrFromStrings(argv); err != nil {
		return nil, fmt.Errorf("program arguments: %w", err)
	}
	execFilter, err := execFilterValue()
	if err != nil {
		return nil, err
	}
	env := append(slices.Clip(p.Env), ExecFilterEnv+"="+execFilter)
	if l.envp, err = syscall.SlicePtrFromStrings(env); err != nil {
		return nil, fmt.Errorf("program environment: %w", err)
	}

	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("set no_new_privs: %w", err)
	}
	if err := dropCapabilities(); err != nil {
		return nil, err
	}
	// Landlock on this thread only, the one that executes the program: a
	// Landlock domain is per thread, and execve keeps only the calling
	// thread. Config.Restrict would apply it to every thread of the Go
	// runtime through libpsx (signals to each thread, below ABI 8), which
	// a launcher about to exec does not need.
	rules, flags, err := landlockConfig(abi).NewRulesetFD(landlockRules(p)...)
	if err != nil {
		return nil, fmt.Errorf("apply Landlock: %w", err)
	}
	err = ll.LandlockRestrictSelf(rules, flags)
	unix.Close(rules)
	if err != nil {
		return nil, fmt.Errorf("apply Landlock: landlock_restrict_self: %w", err)
	}
	if err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}); err != nil {
		return nil, fmt.Errorf("set RLIMIT_CORE: %w", err)
	}
	// After Landlock, which opens a descriptor for its ruleset. os/exec
	// would put back the soft limit the Go runtime raised; a raw execve does
	// not, so without this the program would get the hard limit.
	files := unix.Rlimit{Cur: uint64(p.OpenFiles), Max: uint64(p.OpenFiles)}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &files); err != nil {
		return nil, fmt.Errorf("set RLIMIT_NOFILE: %w", err)
	}
	return l, nil
}

// exec sets RLIMIT_AS, loads the seccomp filters on this thread and executes
// the program, with raw system calls and without allocating. It returns only
// on failure, with the step that failed.
func (l *launch) exec() (step string, errno unix.Errno) {
	// No collection may start past this point: it could need to grow the heap.
	debug.SetGCPercent(-1)
	limit := unix.Rlimit{Cur: l.addressSpace, Max: l.addressSpace}
	if _, _, e := unix.RawSyscall6(unix.SYS_PRLIMIT64, 0, unix.RLIMIT_AS, uintptr(unsafe.Pointer(&limit)), 0, 0, 0); e != 0 {
		return "set RLIMIT_AS", e
	}
	for i := range l.fprogs {
		if _, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&l.fprogs[i]))); e != 0 {
			return "load seccomp filter", e
		}
	}
	_, _, e := unix.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(l.path)),
		uintptr(unsafe.Pointer(&l.argv[0])), uintptr(unsafe.Pointer(&l.envp[0])))
	return l.execStep, e
}

// rawStderr writes to fd 2 without allocating.
func rawStderr(parts ...string) {
	for _, s := range parts {
		if s != "" {
			unix.RawSyscall(unix.SYS_WRITE, 2, uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(len(s)))
		}
	}
}

// dropCapabilities empties this thread's capability sets. With no_new_privs
// set, execve cannot grant any back, so a worker started by root cannot
// raise its limits, renice the supervisor or change the clock.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}

// landlockConfig returns the strictest go-landlock preset the kernel's ABI
// supports, from V6 on: later ABIs also deny pathname UNIX sockets (V9) and
// UDP (V10).
func landlockConfig(abi int) landlock.Config {
	presets := []landlock.Config{landlock.V6, landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}
	return presets[min(abi, 11)-minLandlockABI]
}

// landlockRules grants p's paths. Network rules are absent on purpose: the
// handled TCP (and from V10 UDP) rights are then denied everywhere.
func landlockRules(p Policy) []landlock.Rule {
	const (
		read      = ll.AccessFSReadFile | ll.AccessFSReadDir
		readExec  = ll.AccessFSReadFile | ll.AccessFSExecute
		readWrite = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate
		// Everything a program needs to produce files, without execute,
		// device nodes, sockets, FIFOs or symbolic links.
		writeDir = read | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSMakeReg | ll.AccessFSMakeDir |
			ll.AccessFSRemoveFile | ll.AccessFSRemoveDir | ll.AccessFSRefer
	)
	var rules []landlock.Rule
	add := func(access landlock.AccessFSSet, paths []string) {
		if len(paths) > 0 {
			rules = append(rules, landlock.PathAccess(access, paths...))
		}
	}
	add(read, p.ReadDirs)
	add(ll.AccessFSReadFile, p.ReadFiles)
	add(readExec, p.ExecFiles)
	add(writeDir, p.WriteDirs)
	add(readWrite, p.WriteFiles)
	return rules
}
