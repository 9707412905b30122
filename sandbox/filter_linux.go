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

// deniedSyscalls returns the system calls answered with EPERM, in groups
// that each name what they take away.
func deniedSyscalls() [][]string {
	return [][]string{
		// Processes and threads (clone3 is answered with ENOSYS instead, see
		// denyPolicy). execve stays allowed: the launcher needs it to start the
		// interpreter, which then stacks execFilter to refuse every later one.
		{"clone", "fork", "vfork", "execveat"},
		// The network and local sockets; io_uring creates sockets without socket().
		{"socket", "socketpair", "io_uring_setup", "io_uring_enter", "io_uring_register"},
		// Other processes' memory and descriptors.
		{"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp", "process_madvise"},
		// Kernel objects that outlive the process or observe the system.
		{"bpf", "perf_event_open", "userfaultfd", "fanotify_init", "keyctl", "add_key", "request_key"},
		// inotify: Landlock does not check watches, so a watch on any folder
		// the user may read would report the names of files created, opened
		// and removed there; each watch pins an inode in kernel memory that
		// no process's RSS shows; and watches and instances come out of the
		// user's inotify allowance, which stratbench's own file watching
		// needs.
		{"inotify_init", "inotify_init1", "inotify_add_watch"},
		// System V and POSIX IPC, which reach other processes by name.
		{"shmget", "shmat", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semtimedop", "semctl",
			"mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr"},
		// Memory files. A memfd's pages belong to no process until it maps
		// them: written with write or pwrite and never mapped, they are in no
		// process's RSS and outside RLIMIT_AS, so gigabytes could be held
		// unseen by the tree's memory limit. A memfd is also a file Landlock
		// cannot restrict (it lives on an internal mount), so an ELF written
		// into one could be executed through /proc/self/fd.
		{"memfd_create", "memfd_secret"},
		// Namespaces and mounts.
		{"unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "open_tree", "open_tree_attr", "move_mount",
			"fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "name_to_handle_at", "open_by_handle_at"},
		// File metadata by path, which Landlock does not restrict: without these
		// the worker could chmod, chown or re-time any file its user owns.
		{"chmod", "fchmodat", "fchmodat2", "chown", "lchown", "fchownat", "setxattr", "lsetxattr", "removexattr",
			"lremovexattr", "setxattrat", "removexattrat", "utime", "utimes", "utimensat", "futimesat"},
		// Scheduling of other processes of the same user (the supervisor).
		{"setpriority", "sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr", "ioprio_set"},
		// The machine itself.
		{"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "swapon", "swapoff",
			"acct", "quotactl", "quotactl_fd", "syslog", "vhangup", "iopl", "ioperm", "uselib", "personality", "lookup_dcookie"},
	}
}

// denyPolicy is the deny-list: everything not named is allowed.
func denyPolicy() seccomp.Policy {
	var names []string
	for _, group := range deniedSyscalls() {
		names = append(names, group...)
	}
	return seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Names: names, Action: seccomp.ActionErrno},
			{
				// Limits of other processes (prlimit64 on pid 0 is getrlimit).
				NamesWithCondtions: []seccomp.NameWithConditions{{
					Name:       "prlimit64",
					Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.NotEqual, Value: 0}},
				}},
				Action: seccomp.ActionErrno,
			},
			{
				// EPERM would make glibc give up; ENOSYS makes it fall back
				// to clone, which is denied (moby/moby#42680).
				Names:  []string{"clone3"},
				Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS),
			},
		},
	}
}

// filterPrograms assembles the seccomp programs in the order they are
// installed: the architecture filter, then the deny-list.
func filterPrograms() ([][]bpf.Instruction, error) {
	policy := denyPolicy()
	deny, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("assemble seccomp deny-list: %w", err)
	}
	return [][]bpf.Instruction{archFilter(), deny}, nil
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
