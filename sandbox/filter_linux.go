//go:build linux && amd64

package sandbox

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Offsets in struct seccomp_data.
const (
	seccompDataNr   = 0
	seccompDataArch = 4
)

// x32SyscallBit marks x32-ABI system calls, which share AUDIT_ARCH_X86_64
// with native ones (__X32_SYSCALL_BIT).
const x32SyscallBit = 0x40000000

// highestReviewedSyscall is the highest x86-64 system call number in the
// table that the deny-list was reviewed against (go-seccomp-bpf v1.6.0,
// Linux 6.15: open_tree_attr). Newer system calls get ENOSYS, so a kernel
// upgrade cannot open a hole in the deny-list; C libraries treat ENOSYS as
// "fall back to the older call".
const highestReviewedSyscall = 467

// archFilter is our first seccomp program. go-seccomp-bpf sends a foreign
// architecture straight to the default action (allow, for a deny-list), so
// i386 system calls through int 0x80 would bypass it; this filter kills
// them, kills x32 calls, and answers ENOSYS above the reviewed table.
func archFilter() []bpf.Instruction {
	const (
		kill   = uint32(unix.SECCOMP_RET_KILL_PROCESS)
		enosys = uint32(unix.SECCOMP_RET_ERRNO) | uint32(unix.ENOSYS)
		allow  = uint32(unix.SECCOMP_RET_ALLOW)
	)
	return []bpf.Instruction{
		bpf.LoadAbsolute{Off: seccompDataArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AUDIT_ARCH_X86_64, SkipTrue: 1},
		bpf.RetConstant{Val: kill},
		bpf.LoadAbsolute{Off: seccompDataNr, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32SyscallBit, SkipFalse: 1},
		bpf.RetConstant{Val: kill},
		bpf.JumpIf{Cond: bpf.JumpGreaterThan, Val: highestReviewedSyscall, SkipFalse: 1},
		bpf.RetConstant{Val: enosys},
		bpf.RetConstant{Val: allow},
	}
}

// denial is a group of system calls the deny-list refuses, and the error
// each returns.
type denial struct {
	errno unix.Errno
	names []string
}

// deniedSyscalls returns the system calls the deny-list refuses, in groups
// that each name what they take away. Most get EPERM; a few get the answer
// of a kernel or file system without the call, on which C libraries and
// Python fall back to what the sandbox allows.
func deniedSyscalls() []denial {
	eperm := func(names ...string) denial { return denial{unix.EPERM, names} }
	return []denial{
		// Processes and threads. execve stays allowed: the launcher needs it
		// to start the interpreter, which then stacks execFilter to refuse
		// every later one.
		eperm("clone", "fork", "vfork", "execveat"),
		// EPERM would make glibc give up; ENOSYS makes it fall back to
		// clone, which is refused (moby/moby#42680).
		{unix.ENOSYS, []string{"clone3"}},
		// The network and local sockets; io_uring creates sockets without socket().
		eperm("socket", "socketpair", "io_uring_setup", "io_uring_enter", "io_uring_register"),
		// Other processes: their memory, descriptors and pages, and pidfds,
		// which name a process outside the pid checks Landlock's scopes
		// make (and outlive its pid's reuse). move_pages and migrate_pages
		// move another process's pages between NUMA nodes.
		eperm("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp", "process_madvise",
			"pidfd_open", "pidfd_send_signal", "process_mrelease", "move_pages", "migrate_pages"),
		// Kernel objects that outlive the process or observe the system.
		eperm("bpf", "perf_event_open", "userfaultfd", "fanotify_init", "keyctl", "add_key", "request_key"),
		// inotify: Landlock does not check watches, so a watch on any folder
		// the user may read would report the names of files created, opened
		// and removed there; each watch pins an inode in kernel memory that
		// no process's RSS shows; and watches and instances come out of the
		// user's inotify allowance, which stratbench's own file watching
		// needs. (fcntl's F_NOTIFY, the older form, is refused below.)
		eperm("inotify_init", "inotify_init1", "inotify_add_watch"),
		// System V and POSIX IPC, which reach other processes by name.
		eperm("shmget", "shmat", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semtimedop", "semctl",
			"mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr"),
		// Native asynchronous I/O: its contexts come out of one system-wide
		// pool (fs.aio-max-nr, 65,536 events): a worker that takes them all
		// makes io_setup fail with EAGAIN for every other program of the
		// machine while it runs (measured: 48 s). ENOSYS is a kernel built
		// without it; callers fall back to plain reads and writes.
		{unix.ENOSYS, []string{"io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents"}},
		// Memory files. A memfd's pages belong to no process until it maps
		// them: written with write or pwrite and never mapped, they are in no
		// process's RSS and outside RLIMIT_AS, so gigabytes could be held
		// unseen by the tree's memory limit. A memfd is also a file Landlock
		// cannot restrict (it lives on an internal mount), so an ELF written
		// into one could be executed through /proc/self/fd.
		eperm("memfd_create", "memfd_secret"),
		// Namespaces and mounts, and the mount table (listmount and
		// statmount list mounts by id, outside /proc, which Landlock hides).
		eperm("unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "open_tree", "open_tree_attr", "move_mount",
			"fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "name_to_handle_at", "open_by_handle_at",
			"listmount", "statmount"),
		// File metadata, which Landlock does not restrict, by path and by
		// descriptor alike: a descriptor opened only to read (the strategy
		// itself, a file of the interpreter's) is enough to chmod, chown or
		// set an extended attribute of any file its user owns (measured:
		// fchmod(fd, 0) on a file opened read-only). ioctl's file flags are
		// refused below.
		eperm("chmod", "fchmodat", "fchmodat2", "chown", "lchown", "fchownat", "setxattr", "lsetxattr", "removexattr",
			"lremovexattr", "setxattrat", "removexattrat", "utime", "utimes", "utimensat", "futimesat",
			"fchmod", "fchown", "fsetxattr", "fremovexattr"),
		// Allocation without writing. fallocate takes disk blocks past
		// RLIMIT_FSIZE (FALLOC_FL_KEEP_SIZE leaves the size, which the limit
		// checks, unchanged: measured, 10 MiB under a 1 MiB limit) and
		// gigabytes in milliseconds. EOPNOTSUPP is a file system without it:
		// posix_fallocate then writes the blocks, which every limit counts.
		{unix.EOPNOTSUPP, []string{"fallocate"}},
		// Whole-file locks: an exclusive flock needs only a descriptor
		// opened to read, so a worker could hold one on any file it may read
		// (the strategy, the interpreter's) against every other program
		// that locks it, for as long as it runs. ENOSYS is a file system
		// without locks (HDF5, for one, then goes on unlocked). fcntl's
		// record locks stay (SQLite needs them): they follow the open mode,
		// and a read lock only holds back another program's write lock.
		{unix.ENOSYS, []string{"flock"}},
		// The page cache and the disks of the whole machine: sync and
		// syncfs write back every dirty page of every file system (or of
		// one the worker can only read); cachestat tells which pages of a
		// file other programs have read.
		eperm("sync", "syncfs", "cachestat"),
		// Scheduling of other processes of the same user (the supervisor).
		eperm("setpriority", "sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr", "ioprio_set"),
		// The machine itself, and 16-bit segments (modify_ldt, a source of
		// kernel bugs nothing of ours needs; kernels may be built without it).
		eperm("kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "swapon", "swapoff",
			"acct", "quotactl", "quotactl_fd", "syslog", "vhangup", "iopl", "ioperm", "uselib", "personality", "lookup_dcookie",
			"modify_ldt"),
	}
}

// denyPolicy is the deny-list: everything not named is allowed.
func denyPolicy() seccomp.Policy {
	var groups []seccomp.SyscallGroup
	for _, d := range deniedSyscalls() {
		groups = append(groups, seccomp.SyscallGroup{Names: d.names, Action: seccomp.ActionErrno | seccomp.Action(d.errno)})
	}
	groups = append(groups, seccomp.SyscallGroup{
		// Limits of other processes (prlimit64 on pid 0 is getrlimit).
		NamesWithCondtions: []seccomp.NameWithConditions{{
			Name:       "prlimit64",
			Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.NotEqual, Value: 0}},
		}},
		Action: seccomp.ActionErrno,
	})
	return seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: groups}
}

// commandRule is a system call the worker needs with some of its commands
// only: the command argument (an unsigned int, of which the kernel reads
// the low 32 bits) must be one of allowed, or the call fails with refuse.
type commandRule struct {
	name    string
	nr      uint32
	arg     int
	allowed []uint32
	refuse  unix.Errno
}

// Commands the allow-lists name that golang.org/x/sys/unix does not.
const (
	fionread      = 0x541b     // FIONREAD
	fionbio       = 0x5421     // FIONBIO
	fionclex      = 0x5450     // FIONCLEX
	fioclex       = 0x5451     // FIOCLEX
	fioqsize      = 0x5460     // FIOQSIZE
	figetbsz      = 0x2        // FIGETBSZ
	fsIOC32Get    = 0x80046601 // FS_IOC32_GETFLAGS
	fsIOCGetXattr = 0x801c581f // FS_IOC_FSGETXATTR
)

// commandRules are the argument filters: the commands of fcntl and ioctl the
// worker may use. They are allow-lists, so that a command added to the
// kernel later is refused until reviewed.
//
// fcntl: descriptor and status flags, duplication, record locks (SQLite),
// and queries. Refused: leases (F_SETLEASE: another program's open of the
// file, the user's own editor saving the strategy, blocks until the lease
// is broken, up to 45 s, lease-break-time; measured 46.8 s), directory
// notifications (F_NOTIFY, as inotify), signal-driven I/O (F_SETOWN,
// F_SETOWN_EX, F_SETSIG: signals to a process or group it names), pipe
// sizes (F_SETPIPE_SZ: they come out of the user's pipe allowance, which
// stratbench's own pipes share; at their default size the descriptor
// limit keeps the worker's pipes within it), write-life hints on the inode
// (F_SET_RW_HINT), seals (F_ADD_SEALS) and anything newer.
//
// ioctl: what Python and its libraries ask of a descriptor: is it a
// terminal and its size, bytes readable, blocking and close-on-exec, the
// file's flags and block size. Refused with ENOTTY, the answer for a
// descriptor that does not know the command, which every caller handles:
// the rest, among them the file-flag setters (FS_IOC_SETFLAGS works on a
// descriptor opened to read, as fchmod does), fs-verity (which makes a file
// read-only for good), encryption keys, reflinks and terminal input.
func commandRules() []commandRule {
	return []commandRule{
		{name: "fcntl", nr: unix.SYS_FCNTL, arg: 1, refuse: unix.EPERM, allowed: []uint32{
			unix.F_DUPFD, unix.F_DUPFD_CLOEXEC, unix.F_GETFD, unix.F_SETFD, unix.F_GETFL, unix.F_SETFL,
			unix.F_GETLK, unix.F_SETLK, unix.F_SETLKW, unix.F_OFD_GETLK, unix.F_OFD_SETLK, unix.F_OFD_SETLKW,
			unix.F_GETOWN, unix.F_GETOWN_EX, unix.F_GETSIG, unix.F_GETLEASE, unix.F_GETPIPE_SZ, unix.F_GET_SEALS,
			unix.F_GET_RW_HINT, unix.F_GET_FILE_RW_HINT, unix.F_DUPFD_QUERY, unix.F_CREATED_QUERY,
		}},
		{name: "ioctl", nr: unix.SYS_IOCTL, arg: 1, refuse: unix.ENOTTY, allowed: []uint32{
			unix.TCGETS, unix.TCGETS2, unix.TIOCGWINSZ, unix.TIOCGPGRP, fionread, fionbio, fioclex, fionclex,
			fioqsize, unix.FS_IOC_GETFLAGS, fsIOC32Get, fsIOCGetXattr, figetbsz,
		}},
	}
}

// seccompDataArgs is the offset of args[0] in struct seccomp_data; each
// argument is 8 bytes, its low word first on x86-64.
const seccompDataArgs = 16

// argFilter is our third seccomp program: the commandRules. It checks the
// architecture and the x32 bit itself, so that it holds on its own.
func argFilter() []bpf.Instruction {
	const (
		kill  = uint32(unix.SECCOMP_RET_KILL_PROCESS)
		allow = uint32(unix.SECCOMP_RET_ALLOW)
	)
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: seccompDataArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AUDIT_ARCH_X86_64, SkipTrue: 1},
		bpf.RetConstant{Val: kill},
		bpf.LoadAbsolute{Off: seccompDataNr, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32SyscallBit, SkipFalse: 1},
		bpf.RetConstant{Val: kill},
	}
	for _, r := range commandRules() {
		// Not this call: skip its block (the argument load, one jump per
		// command, and the two returns), with the number still loaded.
		n := len(r.allowed)
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: r.nr, SkipFalse: uint8(n + 3)},
			bpf.LoadAbsolute{Off: uint32(seccompDataArgs + 8*r.arg), Size: 4})
		for i, v := range r.allowed {
			prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: v, SkipTrue: uint8(n - i)})
		}
		prog = append(prog, bpf.RetConstant{Val: uint32(unix.SECCOMP_RET_ERRNO) | uint32(r.refuse)},
			bpf.RetConstant{Val: allow})
	}
	return append(prog, bpf.RetConstant{Val: allow})
}

// filterPrograms assembles the seccomp programs in the order they are
// installed: the architecture filter, the deny-list, the argument filters.
func filterPrograms() ([][]bpf.Instruction, error) {
	policy := denyPolicy()
	deny, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("assemble seccomp deny-list: %w", err)
	}
	return [][]bpf.Instruction{archFilter(), deny, argFilter()}, nil
}

// execFilter is the program the sandboxed interpreter stacks on the
// launcher's filters once it runs (the launcher hands it over in
// ExecFilterEnv): execve and execveat fail with EPERM. The launcher's own
// filters must allow execve, because the launcher starts the interpreter
// with it, and Landlock must let the kernel execute the dynamic loader,
// which it opens with execute permission for every dynamically linked
// program; so without this filter the worker could run any readable file
// through the loader (ld.so ./file) and a memory file through
// /proc/self/fd. Seccomp filters cannot be removed and every one runs on
// each system call, so once it is installed nothing can be executed again.
// It checks the architecture and the x32 bit itself, so that it holds on its
// own.
func execFilter() []bpf.Instruction {
	const (
		kill  = uint32(unix.SECCOMP_RET_KILL_PROCESS)
		eperm = uint32(unix.SECCOMP_RET_ERRNO) | uint32(unix.EPERM)
		allow = uint32(unix.SECCOMP_RET_ALLOW)
	)
	return []bpf.Instruction{
		bpf.LoadAbsolute{Off: seccompDataArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AUDIT_ARCH_X86_64, SkipTrue: 1},
		bpf.RetConstant{Val: kill},
		bpf.LoadAbsolute{Off: seccompDataNr, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32SyscallBit, SkipFalse: 1},
		bpf.RetConstant{Val: kill},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_EXECVE, SkipTrue: 2},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_EXECVEAT, SkipTrue: 1},
		bpf.RetConstant{Val: allow},
		bpf.RetConstant{Val: eperm},
	}
}

// execFilterValue returns ExecFilterEnv's value: execFilter assembled into
// struct sock_filter records (u16 code, u8 jt, u8 jf, u32 k, in the
// machine's little-endian order), hex-encoded.
func execFilterValue() (string, error) {
	filters, err := sockFilters([][]bpf.Instruction{execFilter()})
	if err != nil {
		return "", err
	}
	raw := make([]byte, 0, 8*len(filters[0]))
	for _, ins := range filters[0] {
		raw = binary.LittleEndian.AppendUint16(raw, ins.Code)
		raw = append(raw, ins.Jt, ins.Jf)
		raw = binary.LittleEndian.AppendUint32(raw, ins.K)
	}
	return hex.EncodeToString(raw), nil
}

// sockFilters converts assembled programs into the form seccomp(2) loads.
func sockFilters(progs [][]bpf.Instruction) ([][]unix.SockFilter, error) {
	out := make([][]unix.SockFilter, 0, len(progs))
	for _, prog := range progs {
		raw, err := bpf.Assemble(prog)
		if err != nil {
			return nil, fmt.Errorf("assemble seccomp program: %w", err)
		}
		filter := make([]unix.SockFilter, len(raw))
		for i, ins := range raw {
			filter[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
		}
		out = append(out, filter)
	}
	return out, nil
}
