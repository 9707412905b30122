//go:build linux && amd64

package sandbox

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompData is struct seccomp_data as a filter sees it.
type seccompData struct {
	nr   uint32
	arch uint32
	args [6]uint64
}

// bytes lays d out for the x/net/bpf VM. The VM loads 32-bit words
// big-endian while the kernel hands filters native (little-endian) words,
// so every word is written big-endian at its little-endian offset: a
// 64-bit argument's low word first.
func (d seccompData) bytes() []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[0:], d.nr)
	binary.BigEndian.PutUint32(b[4:], d.arch)
	for i, a := range d.args {
		binary.BigEndian.PutUint32(b[16+8*i:], uint32(a))
		binary.BigEndian.PutUint32(b[20+8*i:], uint32(a>>32))
	}
	return b
}

// evaluate runs the stacked programs as the kernel does: every filter runs,
// and the action with the highest precedence (the lowest as a signed
// number) wins; on a tie the most recently installed filter's value wins.
func evaluate(t *testing.T, progs [][]bpf.Instruction, d seccompData) uint32 {
	t.Helper()
	ret := uint32(unix.SECCOMP_RET_ALLOW)
	for i := len(progs) - 1; i >= 0; i-- {
		vm, err := bpf.NewVM(progs[i])
		if err != nil {
			t.Fatalf("program %d: %v", i, err)
		}
		out, err := vm.Run(d.bytes())
		if err != nil {
			t.Fatalf("program %d: run: %v", i, err)
		}
		cur := uint32(out)
		if int32(cur&unix.SECCOMP_RET_ACTION_FULL) < int32(ret&unix.SECCOMP_RET_ACTION_FULL) {
			ret = cur
		}
	}
	return ret
}

const (
	retKill   = uint32(unix.SECCOMP_RET_KILL_PROCESS)
	retAllow  = uint32(unix.SECCOMP_RET_ALLOW)
	retEPERM  = uint32(unix.SECCOMP_RET_ERRNO) | uint32(unix.EPERM)
	retENOSYS = uint32(unix.SECCOMP_RET_ERRNO) | uint32(unix.ENOSYS)
)

func retName(r uint32) string {
	switch r {
	case retKill:
		return "KILL_PROCESS"
	case retAllow:
		return "ALLOW"
	case retEPERM:
		return "ERRNO(EPERM)"
	case retENOSYS:
		return "ERRNO(ENOSYS)"
	}
	if r&unix.SECCOMP_RET_ACTION_FULL == unix.SECCOMP_RET_ERRNO {
		return "ERRNO(" + unix.ErrnoName(unix.Errno(r&unix.SECCOMP_RET_DATA)) + ")"
	}
	return fmt.Sprintf("%#x", r)
}

func TestFilterVerdicts(t *testing.T) {
	progs, err := filterPrograms()
	if err != nil {
		t.Fatal(err)
	}
	const (
		archI386    = unix.AUDIT_ARCH_I386
		archX86_64  = unix.AUDIT_ARCH_X86_64
		archAArch64 = unix.AUDIT_ARCH_AARCH64
	)
	nr := func(name string) uint32 {
		n, ok := arch.X86_64.SyscallNames[name]
		if !ok {
			t.Fatalf("no x86-64 system call %q", name)
		}
		return uint32(n)
	}
	cases := []struct {
		name string
		data seccompData
		want uint32
	}{
		// i386 through int 0x80: go-seccomp-bpf alone would allow these.
		{"i386 socketcall", seccompData{nr: 102, arch: archI386}, retKill},
		{"i386 socket", seccompData{nr: 359, arch: archI386}, retKill},
		{"i386 fork", seccompData{nr: 2, arch: archI386}, retKill},
		{"i386 read", seccompData{nr: 3, arch: archI386}, retKill},
		{"aarch64 arch value", seccompData{nr: 198, arch: archAArch64}, retKill},
		// x32 shares the x86-64 audit arch and sets bit 30 of the number.
		{"x32 socket", seccompData{nr: x32SyscallBit | 41, arch: archX86_64}, retKill},
		{"x32 fork", seccompData{nr: x32SyscallBit | 57, arch: archX86_64}, retKill},
		{"x32 read", seccompData{nr: x32SyscallBit, arch: archX86_64}, retKill},
		// Numbers above the reviewed table.
		{"first unreviewed number", seccompData{nr: highestReviewedSyscall + 1, arch: archX86_64}, retENOSYS},
		{"number 1000", seccompData{nr: 1000, arch: archX86_64}, retENOSYS},
		{"highest non-x32 number", seccompData{nr: x32SyscallBit - 1, arch: archX86_64}, retENOSYS},
		{"highest reviewed number (open_tree_attr, denied)", seccompData{nr: highestReviewedSyscall, arch: archX86_64}, retEPERM},
		// The deny-list.
		{"socket", seccompData{nr: nr("socket"), arch: archX86_64}, retEPERM},
		{"clone", seccompData{nr: nr("clone"), arch: archX86_64}, retEPERM},
		{"clone3", seccompData{nr: nr("clone3"), arch: archX86_64}, retENOSYS},
		{"prlimit64 on itself", seccompData{nr: nr("prlimit64"), arch: archX86_64}, retAllow},
		{"prlimit64 on another pid", seccompData{nr: nr("prlimit64"), arch: archX86_64, args: [6]uint64{1234}}, retEPERM},
		{"prlimit64 on pid 0 with high bits", seccompData{nr: nr("prlimit64"), arch: archX86_64, args: [6]uint64{1 << 32}}, retEPERM},
		// What Python needs.
		{"read", seccompData{nr: nr("read"), arch: archX86_64}, retAllow},
		{"execve", seccompData{nr: nr("execve"), arch: archX86_64}, retAllow},
		{"getpid", seccompData{nr: nr("getpid"), arch: archX86_64}, retAllow},
		{"exit_group", seccompData{nr: nr("exit_group"), arch: archX86_64}, retAllow},
	}
	for _, c := range cases {
		if got := evaluate(t, progs, c.data); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, retName(got), retName(c.want))
		}
	}

	// Why the arch filter exists: the deny-list alone sends a foreign
	// architecture to its default action.
	deny := progs[len(progs)-1:]
	got := evaluate(t, deny, seccompData{nr: 359, arch: archI386})
	t.Logf("deny-list alone, i386 socket: %s", retName(got))
}

// TestFilterCoversTable checks every system call of the reviewed table:
// the named ones are refused with their group's errno, and all others
// allowed (fcntl and ioctl with an allowed command: TestArgFilterVerdicts
// covers the others).
func TestFilterCoversTable(t *testing.T) {
	progs, err := filterPrograms()
	if err != nil {
		t.Fatal(err)
	}
	denied := map[string]uint32{}
	for _, group := range deniedSyscalls() {
		for _, name := range group.names {
			if _, ok := denied[name]; ok {
				t.Errorf("%s is listed twice", name)
			}
			denied[name] = uint32(unix.SECCOMP_RET_ERRNO) | uint32(group.errno)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(arch.X86_64.SyscallNumbers)) {
		name := arch.X86_64.SyscallNumbers[n]
		want := retAllow
		if ret, ok := denied[name]; ok {
			want = ret
		}
		d := seccompData{nr: uint32(n), arch: unix.AUDIT_ARCH_X86_64}
		if name == "ioctl" {
			d.args[1] = unix.TCGETS // command 0 is no allowed ioctl
		}
		if got := evaluate(t, progs, d); got != want {
			t.Errorf("%s (%d): %s, want %s", name, n, retName(got), retName(want))
		}
	}
}

// TestArgFilterVerdicts checks the commands of fcntl and ioctl, as the
// kernel reads them: the low 32 bits of the argument.
func TestArgFilterVerdicts(t *testing.T) {
	progs, err := filterPrograms()
	if err != nil {
		t.Fatal(err)
	}
	retENOTTY := uint32(unix.SECCOMP_RET_ERRNO) | uint32(unix.ENOTTY)
	call := func(nr uintptr, cmd uint64) seccompData {
		return seccompData{nr: uint32(nr), arch: unix.AUDIT_ARCH_X86_64, args: [6]uint64{3, cmd, 0}}
	}
	cases := []struct {
		name string
		data seccompData
		want uint32
	}{
		{"fcntl F_GETFD", call(unix.SYS_FCNTL, unix.F_GETFD), retAllow},
		{"fcntl F_SETFL", call(unix.SYS_FCNTL, unix.F_SETFL), retAllow},
		{"fcntl F_DUPFD_CLOEXEC", call(unix.SYS_FCNTL, unix.F_DUPFD_CLOEXEC), retAllow},
		{"fcntl F_SETLK (SQLite)", call(unix.SYS_FCNTL, unix.F_SETLK), retAllow},
		{"fcntl F_OFD_SETLKW", call(unix.SYS_FCNTL, unix.F_OFD_SETLKW), retAllow},
		{"fcntl F_GETLEASE", call(unix.SYS_FCNTL, unix.F_GETLEASE), retAllow},
		{"fcntl F_SETLEASE", call(unix.SYS_FCNTL, unix.F_SETLEASE), retEPERM},
		{"fcntl F_NOTIFY", call(unix.SYS_FCNTL, unix.F_NOTIFY), retEPERM},
		{"fcntl F_SETOWN", call(unix.SYS_FCNTL, unix.F_SETOWN), retEPERM},
		{"fcntl F_SETOWN_EX", call(unix.SYS_FCNTL, unix.F_SETOWN_EX), retEPERM},
		{"fcntl F_SETSIG", call(unix.SYS_FCNTL, unix.F_SETSIG), retEPERM},
		{"fcntl F_SETPIPE_SZ", call(unix.SYS_FCNTL, unix.F_SETPIPE_SZ), retEPERM},
		{"fcntl F_ADD_SEALS", call(unix.SYS_FCNTL, unix.F_ADD_SEALS), retEPERM},
		{"fcntl unknown command", call(unix.SYS_FCNTL, 0x7fff), retEPERM},
		// The kernel reads the low 32 bits: high bits neither hide a
		// refused command nor spoil an allowed one.
		{"fcntl F_SETLEASE with high bits", call(unix.SYS_FCNTL, 1<<32|unix.F_SETLEASE), retEPERM},
		{"fcntl F_GETFD with high bits", call(unix.SYS_FCNTL, 1<<40|unix.F_GETFD), retAllow},
		{"ioctl TCGETS (isatty)", call(unix.SYS_IOCTL, unix.TCGETS), retAllow},
		{"ioctl FIOCLEX", call(unix.SYS_IOCTL, fioclex), retAllow},
		{"ioctl TIOCGWINSZ", call(unix.SYS_IOCTL, unix.TIOCGWINSZ), retAllow},
		{"ioctl FS_IOC_GETFLAGS", call(unix.SYS_IOCTL, unix.FS_IOC_GETFLAGS), retAllow},
		{"ioctl FS_IOC_SETFLAGS", call(unix.SYS_IOCTL, unix.FS_IOC_SETFLAGS), retENOTTY},
		{"ioctl FS_IOC_SETFLAGS with high bits", call(unix.SYS_IOCTL, 0xffffffff00000000|unix.FS_IOC_SETFLAGS), retENOTTY},
		{"ioctl FS_IOC_ENABLE_VERITY", call(unix.SYS_IOCTL, unix.FS_IOC_ENABLE_VERITY), retENOTTY},
		{"ioctl FICLONE", call(unix.SYS_IOCTL, unix.FICLONE), retENOTTY},
		{"ioctl TIOCSTI", call(unix.SYS_IOCTL, unix.TIOCSTI), retENOTTY},
		// Other calls are left to the other filters.
		{"read", call(unix.SYS_READ, unix.F_SETLEASE), retAllow},
		{"flock", call(unix.SYS_FLOCK, unix.LOCK_EX), retENOSYS},
	}
	for _, c := range cases {
		if got := evaluate(t, progs, c.data); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, retName(got), retName(c.want))
		}
	}
	// The argument filter holds on its own against a foreign architecture.
	if got := evaluate(t, [][]bpf.Instruction{argFilter()}, seccompData{nr: uint32(unix.SYS_FCNTL), arch: unix.AUDIT_ARCH_I386}); got != retKill {
		t.Errorf("argument filter alone, i386: %s, want %s", retName(got), retName(retKill))
	}
}

// TestHighestReviewedSyscall fails when go-seccomp-bpf's table grows: the
// new system calls must be reviewed for the deny-list before the ENOSYS
// boundary moves.
func TestHighestReviewedSyscall(t *testing.T) {
	highest := slices.Max(slices.Collect(maps.Keys(arch.X86_64.SyscallNumbers)))
	if highest != highestReviewedSyscall {
		t.Errorf("go-seccomp-bpf's x86-64 table ends at %d (%s), the deny-list was reviewed up to %d",
			highest, arch.X86_64.SyscallNumbers[highest], highestReviewedSyscall)
	}
}

// TestExecFilterVerdicts checks the exec filter alone and stacked on the
// launcher's filters, as the worker runs under both.
func TestExecFilterVerdicts(t *testing.T) {
	launcher, err := filterPrograms()
	if err != nil {
		t.Fatal(err)
	}
	alone := [][]bpf.Instruction{execFilter()}
	stacked := append(launcher, execFilter())
	nr := func(name string) uint32 { return uint32(arch.X86_64.SyscallNames[name]) }
	x86 := func(n uint32) seccompData { return seccompData{nr: n, arch: unix.AUDIT_ARCH_X86_64} }
	cases := []struct {
		name           string
		data           seccompData
		alone, stacked uint32
	}{
		{"execve", x86(nr("execve")), retEPERM, retEPERM},
		{"execveat", x86(nr("execveat")), retEPERM, retEPERM},
		{"execve with argument bits", seccompData{nr: nr("execve"), arch: unix.AUDIT_ARCH_X86_64, args: [6]uint64{1 << 40, 2, 3}}, retEPERM, retEPERM},
		{"x32 execve", x86(x32SyscallBit | 520), retKill, retKill},
		{"x32 execveat", x86(x32SyscallBit | 545), retKill, retKill},
		{"i386 execve", seccompData{nr: 11, arch: unix.AUDIT_ARCH_I386}, retKill, retKill},
		{"read", x86(nr("read")), retAllow, retAllow},
		{"mmap", x86(nr("mmap")), retAllow, retAllow},
		{"exit_group", x86(nr("exit_group")), retAllow, retAllow},
		// The launcher's verdicts still hold under the stack.
		{"socket", x86(nr("socket")), retAllow, retEPERM},
		{"memfd_create", x86(nr("memfd_create")), retAllow, retEPERM},
		{"clone3", x86(nr("clone3")), retAllow, retENOSYS},
		{"first unreviewed number", x86(highestReviewedSyscall + 1), retAllow, retENOSYS},
	}
	for _, c := range cases {
		if got := evaluate(t, alone, c.data); got != c.alone {
			t.Errorf("%s, exec filter alone: %s, want %s", c.name, retName(got), retName(c.alone))
		}
		if got := evaluate(t, stacked, c.data); got != c.stacked {
			t.Errorf("%s, stacked: %s, want %s", c.name, retName(got), retName(c.stacked))
		}
	}
}

// TestExecFilterValue decodes ExecFilterEnv's value as the worker does and
// checks that it is the assembled exec filter.
func TestExecFilterValue(t *testing.T) {
	value, err := execFilterValue()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := hex.DecodeString(value)
	if err != nil {
		t.Fatalf("value %q is not hexadecimal: %v", value, err)
	}
	if len(raw)%8 != 0 {
		t.Fatalf("%d bytes, not a whole number of 8-byte records", len(raw))
	}
	var got []bpf.RawInstruction
	for rec := range slices.Chunk(raw, 8) {
		got = append(got, bpf.RawInstruction{
			Op: binary.LittleEndian.Uint16(rec[0:]), Jt: rec[2], Jf: rec[3], K: binary.LittleEndian.Uint32(rec[4:]),
		})
	}
	want, err := bpf.Assemble(execFilter())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("decoded program\n%v\nwant\n%v", got, want)
	}
}
